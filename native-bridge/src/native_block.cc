// rowBinaryToNative(chunks, rowCount, types, headers, out): Promise<number>
//
// Turns an insert block of RowBinary rows (the rows every decoder writes, sample-table.ts order) into
// one block of ClickHouse's Native format, column after column, on a libuv thread pool thread.
//
// Why: the ClickHouse server parses Native far more cheaply than RowBinary. Native is a column's
// values back to back (fixed-width columns are copied as they are), where RowBinary makes the server
// read every value of every row through its type's own reader. With the same 2,000,000 rows on the
// legacy table, 18.16 spent 1.0-1.4 us of CPU per row on Native inserts against 1.8-2.4 on RowBinary
// (bench/clickhouse-insert-format.mjs). The gateway keeps RowBinary everywhere else (snapshots, the
// spool, live binary messages and the cluster's shard split read it), so the conversion happens once,
// just before the insert, here.
//
// Why on the thread pool: an insert block at peak load is up to 250,000 rows (48 MiB); converting it
// on the event loop would hold robot commands for tens of milliseconds.
//
// Why this is safe off the main thread: the caller keeps `chunks` and `out` alive and untouched until
// the promise settles (src/telemetry/native-insert.ts: the insert queue never mutates a block's rows
// while its insert runs, and `out` is the converter's own buffer); the worker also holds references.
//
// Layout written (what 18.16 writes itself for `SELECT ... FORMAT Native`, checked byte for byte by
// test/telemetry/native-insert.test.ts): varint column count, varint row count, then per column its
// name and type (the `headers` bytes, prepared once by the caller) and its values:
//   fixed width: the little-endian values; String: varint length + bytes (as in RowBinary);
//   Array(String): a UInt64 running count of elements per row, then every element as a String.
#include "native_block.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "RowBinary and Native are little-endian; so must the host be");

namespace {

// Column kinds, as src/telemetry/native-insert.ts numbers them.
enum Kind : uint8_t { kString = 0, kFixed1 = 1, kFixed4 = 4, kFixed8 = 8, kArrayString = 100 };

struct Chunk {
  const uint8_t* p;
  size_t n;
};

bool uint8Bytes(const Napi::Value& v, uint8_t*& data, size_t& len) {
  napi_typedarray_type type;
  void* p = nullptr;
  len = 0;
  if (!v.IsTypedArray() || napi_get_typedarray_info(v.Env(), v, &type, &len, &p, nullptr, nullptr) != napi_ok) return false;
  if (type != napi_uint8_array) return false;
  data = static_cast<uint8_t*>(p);
  return true;
}

// LEB128 as ClickHouse's readVarUInt (at most 9 bytes). False when it runs past `end` or is too long.
inline bool readVarUInt(const uint8_t*& p, const uint8_t* end, uint64_t& v) {
  v = 0;
  for (int i = 0; i < 9; i++) {
    if (p >= end) return false;
    uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

inline size_t varUIntSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

inline uint8_t* writeVarUInt(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

class Converter : public Napi::AsyncWorker {
 public:
  Converter(Napi::Env env, std::vector<Chunk> chunks, uint64_t rowCount, std::vector<uint8_t> kinds,
            const uint8_t* headers, std::vector<uint32_t> headerOffsets, uint8_t* out, size_t outLen,
            std::vector<Napi::Reference<Napi::Value>> keep)
      : Napi::AsyncWorker(env),
        deferred_(Napi::Promise::Deferred::New(env)),
        chunks_(std::move(chunks)),
        rowCount_(rowCount),
        kinds_(std::move(kinds)),
        headers_(headers),
        headerOffsets_(std::move(headerOffsets)),
        out_(out),
        outLen_(outLen),
        keep_(std::move(keep)) {}

  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
    const size_t cols = kinds_.size();
    // Pass 1: check every row is whole and well formed, count rows, and measure each column.
    std::vector<uint64_t> bytes(cols, 0);  // value bytes of String columns / element bytes of arrays
    std::vector<uint64_t> elems(cols, 0);
    uint64_t rows = 0;
    for (size_t ci = 0; ci < chunks_.size(); ci++) {
      const uint8_t* p = chunks_[ci].p;
      const uint8_t* end = p + chunks_[ci].n;
      while (p < end) {
        for (size_t c = 0; c < cols; c++) {
          const uint8_t k = kinds_[c];
          if (k == kString) {
            const uint8_t* s = p;
            uint64_t len;
            if (!readVarUInt(p, end, len) || len > static_cast<uint64_t>(end - p)) return fail(ci, rows, c);
            p += len;
            bytes[c] += static_cast<uint64_t>(p - s);
          } else if (k == kArrayString) {
            uint64_t n;
            if (!readVarUInt(p, end, n)) return fail(ci, rows, c);
            const uint8_t* s = p;
            for (uint64_t i = 0; i < n; i++) {
              uint64_t len;
              if (!readVarUInt(p, end, len) || len > static_cast<uint64_t>(end - p)) return fail(ci, rows, c);
              p += len;
            }
            elems[c] += n;
            bytes[c] += static_cast<uint64_t>(p - s);
          } else {
            if (static_cast<size_t>(end - p) < k) return fail(ci, rows, c);
            p += k;
          }
        }
        rows++;
      }
    }
    if (rows != rowCount_) {
      SetError("rowBinaryToNative: the chunks hold " + std::to_string(rows) + " rows, not " + std::to_string(rowCount_));
      return;
    }
    // Where each column's values start in `out`.
    std::vector<uint8_t*> cur(cols), arr(cols, nullptr);
    uint64_t size = varUIntSize(cols) + varUIntSize(rows) + headerOffsets_[cols];
    for (size_t c = 0; c < cols; c++) {
      const uint8_t k = kinds_[c];
      size += k == kString ? bytes[c] : k == kArrayString ? rows * 8 + bytes[c] : rows * k;
    }
    if (size > outLen_) {
      SetError("rowBinaryToNative: out holds " + std::to_string(outLen_) + " bytes, the block needs " + std::to_string(size));
      return;
    }
    uint8_t* w = writeVarUInt(writeVarUInt(out_, cols), rows);
    for (size_t c = 0; c < cols; c++) {
      const uint32_t h0 = headerOffsets_[c], h1 = headerOffsets_[c + 1];
      std::memcpy(w, headers_ + h0, h1 - h0);
      w += h1 - h0;
      const uint8_t k = kinds_[c];
      if (k == kArrayString) {
        arr[c] = w;  // the running element counts
        cur[c] = w + rows * 8;
      } else {
        cur[c] = w;
      }
      w += k == kString ? bytes[c] : k == kArrayString ? rows * 8 + bytes[c] : rows * k;
    }
    written_ = static_cast<size_t>(w - out_);
    // Pass 2: every value to its column (pass 1 has checked every bound).
    std::vector<uint64_t> running(cols, 0);
    for (const Chunk& ch : chunks_) {
      const uint8_t* p = ch.p;
      const uint8_t* end = p + ch.n;
      while (p < end) {
        for (size_t c = 0; c < cols; c++) {
          const uint8_t k = kinds_[c];
          if (k == kString) {
            const uint8_t* s = p;
            uint64_t len;
            readVarUInt(p, end, len);
            p += len;
            const size_t n = static_cast<size_t>(p - s);
            std::memcpy(cur[c], s, n);
            cur[c] += n;
          } else if (k == kArrayString) {
            uint64_t n;
            readVarUInt(p, end, n);
            const uint8_t* s = p;
            for (uint64_t i = 0; i < n; i++) {
              uint64_t len;
              readVarUInt(p, end, len);
              p += len;
            }
            running[c] += n;
            std::memcpy(arr[c], &running[c], 8);
            arr[c] += 8;
            const size_t m = static_cast<size_t>(p - s);
            std::memcpy(cur[c], s, m);
            cur[c] += m;
          } else if (k == kFixed8) {
            std::memcpy(cur[c], p, 8);
            cur[c] += 8;
            p += 8;
          } else if (k == kFixed4) {
            std::memcpy(cur[c], p, 4);
            cur[c] += 4;
            p += 4;
          } else {
            *cur[c]++ = *p++;
          }
        }
      }
    }
  }

  void OnOK() override { deferred_.Resolve(Napi::Number::New(Env(), static_cast<double>(written_))); }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  void fail(size_t chunk, uint64_t row, size_t col) {
    SetError("rowBinaryToNative: row " + std::to_string(row) + " is cut short or malformed at column " + std::to_string(col) +
             " (chunk " + std::to_string(chunk) + ")");
  }

  Napi::Promise::Deferred deferred_;
  std::vector<Chunk> chunks_;
  uint64_t rowCount_;
  std::vector<uint8_t> kinds_;
  const uint8_t* headers_;
  std::vector<uint32_t> headerOffsets_;
  uint8_t* out_;
  size_t outLen_;
  std::vector<Napi::Reference<Napi::Value>> keep_;
  size_t written_ = 0;
};

Napi::Value RowBinaryToNative(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage =
      "rowBinaryToNative(chunks: Uint8Array[], rowCount: number, kinds: Uint8Array, headers: Uint8Array, headerOffsets: Uint32Array, out: Uint8Array)";
  uint8_t *kinds = nullptr, *headers = nullptr, *out = nullptr;
  size_t kindsLen = 0, headersLen = 0, outLen = 0;
  if (info.Length() < 6 || !info[0].IsArray() || !info[1].IsNumber() || !uint8Bytes(info[2], kinds, kindsLen) ||
      !uint8Bytes(info[3], headers, headersLen) || !info[4].IsTypedArray() || !uint8Bytes(info[5], out, outLen)) {
    Napi::TypeError::New(env, usage).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Napi::TypedArray offs = info[4].As<Napi::TypedArray>();
  if (offs.TypedArrayType() != napi_uint32_array || offs.ElementLength() != kindsLen + 1) {
    Napi::TypeError::New(env, "rowBinaryToNative: headerOffsets must be a Uint32Array of kinds.length + 1").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Napi::Uint32Array offsets = info[4].As<Napi::Uint32Array>();
  std::vector<uint32_t> headerOffsets(offsets.Data(), offsets.Data() + offsets.ElementLength());
  for (size_t i = 0; i < kindsLen; i++) {
    const uint8_t k = kinds[i];
    if ((k != kString && k != kFixed1 && k != kFixed4 && k != kFixed8 && k != kArrayString) || headerOffsets[i] > headerOffsets[i + 1]) {
      Napi::TypeError::New(env, "rowBinaryToNative: bad column kind or header offsets").ThrowAsJavaScriptException();
      return env.Undefined();
    }
  }
  if (headerOffsets[kindsLen] > headersLen) {
    Napi::RangeError::New(env, "rowBinaryToNative: header offsets run past headers").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const double rowCount = info[1].As<Napi::Number>().DoubleValue();
  if (!(rowCount >= 0) || rowCount > 9007199254740991.0 || static_cast<double>(static_cast<uint64_t>(rowCount)) != rowCount) {
    Napi::RangeError::New(env, "rowBinaryToNative: rowCount must be a non-negative integer").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Napi::Array arr = info[0].As<Napi::Array>();
  std::vector<Chunk> chunks;
  std::vector<Napi::Reference<Napi::Value>> keep;
  chunks.reserve(arr.Length());
  keep.reserve(arr.Length() + 4);
  for (uint32_t i = 0; i < arr.Length(); i++) {
    Napi::Value v = arr.Get(i);
    uint8_t* p = nullptr;
    size_t n = 0;
    if (!uint8Bytes(v, p, n)) {
      Napi::TypeError::New(env, "rowBinaryToNative: chunks must be Uint8Arrays").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    chunks.push_back({p, n});
    keep.push_back(Napi::Persistent(v));
  }
  for (int i : {2, 3, 4, 5}) keep.push_back(Napi::Persistent(info[i]));
  auto* worker = new Converter(env, std::move(chunks), static_cast<uint64_t>(rowCount), std::vector<uint8_t>(kinds, kinds + kindsLen),
                               headers, std::move(headerOffsets), out, outLen, std::move(keep));
  Napi::Promise promise = worker->Promise();
  worker->Queue();  // deleted by node-addon-api after OnOK/OnError
  return promise;
}

}  // namespace

void RegisterNativeBlock(Napi::Env env, Napi::Object exports) {
  exports.Set("rowBinaryToNative", Napi::Function::New(env, RowBinaryToNative));
}
