// rowBinaryToNative(chunks, rowCount, kinds, headers, headerOffsets, out, sortKey): Promise<number>
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
// the promise settles (src/telemetry/store/native-insert.ts: the insert queue never mutates a block's rows
// while its insert runs, and `out` is the converter's own buffer); the worker also holds references.
//
// Row order: when given the table's sort key columns (`sortKey`: fleet id, robot id, ts_ms column
// indexes), the rows go out ordered by it, the order MergeTree must write a part in. A block arrives
// as runs of one robot's samples (a message each), the robots' runs interleaved; the server sorts
// such a block by comparing strings row against row, and skips that when the block is already in
// order. Sorted here (a counting sort by robot, which keeps each robot's arrival order, plus a sort by
// ts_ms only for a robot whose samples went back in time) the same rows cost 18.16 a further third
// less (bench/clickhouse-insert-format.mjs). Only the order changes, and the server sorts anyway when
// a block is not in its order, so this is never a correctness matter; a retried block converts to the
// same bytes.
//
// Layout written (what 18.16 writes itself for `SELECT ... FORMAT Native`, checked byte for byte by
// test/telemetry/native-insert.test.ts): varint column count, varint row count, then per column its
// name and type (the `headers` bytes, prepared once by the caller) and its values:
//   fixed width: the little-endian values; String: varint length + bytes (as in RowBinary);
//   Array(String): a UInt64 running count of elements per row, then every element as a String.
#include "native_block.h"

#include "page_advice.h"
#include "typed_bytes.h"

#include <algorithm>
#include <atomic>
#include <ctime>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "RowBinary and Native are little-endian; so must the host be");

namespace {

// CPU time the pool threads spent converting, for the store's stats (the pool's threads are not
// otherwise told apart from V8's in /proc: all are named "node").
std::atomic<uint64_t> gConvertCpuNs{0};

uint64_t threadCpuNs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

struct CpuMeter {
  uint64_t start = threadCpuNs();
  ~CpuMeter() { gConvertCpuNs.fetch_add(threadCpuNs() - start, std::memory_order_relaxed); }
};

// Column kinds, as src/telemetry/store/native-insert.ts numbers them.
enum Kind : uint8_t { kString = 0, kFixed1 = 1, kFixed4 = 4, kFixed8 = 8, kArrayString = 100 };

struct Chunk {
  const uint8_t* p;
  size_t n;
};

// Rows are read with allowShared false: another thread could change a shared buffer's bytes between
// the two passes, and pass 2 trusts what pass 1 checked. `out` may be shared (native-insert.ts
// allocates it so: V8 does not count a SharedArrayBuffer toward starting its next full GC); only this
// conversion writes it.
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
            std::vector<Napi::Reference<Napi::Value>> keep, int sortFleet, int sortRobot, int sortTs)
      : Napi::AsyncWorker(env),
        deferred_(Napi::Promise::Deferred::New(env)),
        chunks_(std::move(chunks)),
        rowCount_(rowCount),
        kinds_(std::move(kinds)),
        headers_(headers),
        headerOffsets_(std::move(headerOffsets)),
        out_(out),
        outLen_(outLen),
        keep_(std::move(keep)),
        sortFleet_(sortFleet),
        sortRobot_(sortRobot),
        sortTs_(sortTs) {}

  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
    CpuMeter meter;
    // Only allocation can throw here (bad_alloc): a rejected promise, never std::terminate on a pool
    // thread. No allocation in the handler (SetError's string could throw again): OnOK rejects.
    try {
      convert();
    } catch (...) {
      outOfMemory_ = true;
    }
  }

  void convert() {
    const size_t cols = kinds_.size();
    const bool sort = sortFleet_ >= 0;
    // Pass 1: check every row is whole and well formed, count rows, and measure each column; when
    // sorting, note where each row is, its robot group and its ts_ms.
    std::vector<uint64_t> bytes(cols, 0);  // value bytes of String columns / element bytes of arrays
    uint64_t rows = 0;
    std::vector<Row> at;
    std::vector<Group> groups;
    std::unordered_map<std::string_view, uint32_t> groupOf;
    // A row is at least a byte per column, so the bytes bound the rows whatever rowCount says.
    size_t totalBytes = 0;
    for (const Chunk& ch : chunks_) totalBytes += ch.n;
    if (sort) at.reserve(std::min(static_cast<size_t>(rowCount_), totalBytes / cols));
    for (size_t ci = 0; ci < chunks_.size(); ci++) {
      const uint8_t* p = chunks_[ci].p;
      const uint8_t* end = p + chunks_[ci].n;
      while (p < end) {
        const uint8_t* rowStart = p;
        std::string_view fleet, robot;
        const uint8_t* keyStart = nullptr;  // the two id columns, varint prefixes included
        const uint8_t* keyEnd = nullptr;
        int64_t ts = 0;
        for (size_t c = 0; c < cols; c++) {
          const uint8_t k = kinds_[c];
          if (k == kString) {
            const uint8_t* s = p;
            uint64_t len;
            if (!readVarUInt(p, end, len) || len > static_cast<uint64_t>(end - p)) return fail(ci, rows, c);
            const bool isFleet = static_cast<int>(c) == sortFleet_;
            if (isFleet || static_cast<int>(c) == sortRobot_) {
              (isFleet ? fleet : robot) = std::string_view(reinterpret_cast<const char*>(p), len);
              if (keyStart == nullptr) keyStart = s;
              keyEnd = p + len;
            }
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
            bytes[c] += static_cast<uint64_t>(p - s);
          } else {
            if (static_cast<size_t>(end - p) < k) return fail(ci, rows, c);
            if (static_cast<int>(c) == sortTs_) std::memcpy(&ts, p, 8);
            p += k;
          }
        }
        if (sort) {
          // Consecutive rows are mostly the same robot (a message's samples): compare before hashing.
          uint32_t g;
          if (!at.empty() && groups[at.back().group].robot == robot && groups[at.back().group].fleet == fleet) {
            g = at.back().group;
          } else {
            // Another robot than the row before: look it up by the row's own bytes of the two ids
            // (adjacent columns; with their length prefixes the pair is unambiguous).
            const std::string_view key(reinterpret_cast<const char*>(keyStart), static_cast<size_t>(keyEnd - keyStart));
            auto it = groupOf.find(key);
            if (it != groupOf.end()) {
              g = it->second;
            } else {
              g = static_cast<uint32_t>(groups.size());
              groups.push_back({fleet, robot, 0, 0, ts, false});
              groupOf.emplace(key, g);
            }
          }
          Group& gr = groups[g];
          if (gr.rows > 0 && ts < gr.lastTs) gr.backInTime = true;
          gr.lastTs = ts;
          gr.rows++;
          at.push_back({rowStart, static_cast<uint32_t>(p - rowStart), g, ts});
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
    if (!sort) {
      for (const Chunk& ch : chunks_) {
        const uint8_t* p = ch.p;
        const uint8_t* end = p + ch.n;
        while (p < end) p = writeRow(p, end, cur, arr, running);
      }
      return;
    }
    // Groups in key order (strings compare as ClickHouse compares them: bytes, then length), then
    // each group's rows at its place, in arrival order (a counting sort, stable).
    std::vector<uint32_t> order(groups.size());
    for (uint32_t i = 0; i < order.size(); i++) order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
      const Group& a = groups[x];
      const Group& b = groups[y];
      return a.fleet != b.fleet ? a.fleet < b.fleet : a.robot < b.robot;
    });
    uint32_t next = 0;
    for (uint32_t g : order) {
      groups[g].first = next;
      next += groups[g].rows;
    }
    std::vector<uint32_t> slot(groups.size());
    for (uint32_t g = 0; g < groups.size(); g++) slot[g] = groups[g].first;
    std::vector<uint32_t> sorted(at.size());
    for (uint32_t i = 0; i < at.size(); i++) sorted[slot[at[i].group]++] = i;
    for (const Group& g : groups) {
      if (!g.backInTime) continue;
      std::stable_sort(sorted.begin() + g.first, sorted.begin() + g.first + g.rows,
                       [&](uint32_t x, uint32_t y) { return at[x].ts < at[y].ts; });
    }
    for (uint32_t i : sorted) writeRow(at[i].start, at[i].start + at[i].len, cur, arr, running);
  }

  void OnOK() override {
    if (outOfMemory_) {
      deferred_.Reject(Napi::Error::New(Env(), "rowBinaryToNative: out of memory").Value());
      return;
    }
    deferred_.Resolve(Napi::Number::New(Env(), static_cast<double>(written_)));
  }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  struct Row {
    const uint8_t* start;
    uint32_t len;
    uint32_t group;
    int64_t ts;
  };
  // One robot of the block (its fleet id and robot id point into the rows).
  struct Group {
    std::string_view fleet, robot;
    uint32_t rows, first;
    int64_t lastTs;
    bool backInTime;
  };

  // Writes the row at `p` (checked by pass 1) to the columns; returns where the next row starts.
  const uint8_t* writeRow(const uint8_t* p, const uint8_t* end, std::vector<uint8_t*>& cur, std::vector<uint8_t*>& arr,
                          std::vector<uint64_t>& running) {
    const size_t cols = kinds_.size();
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
    return p;
  }

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
  int sortFleet_, sortRobot_, sortTs_;
  size_t written_ = 0;
  bool outOfMemory_ = false;
};

Napi::Value RowBinaryToNative(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage =
      "rowBinaryToNative(chunks: Uint8Array[], rowCount: number, kinds: Uint8Array, headers: Uint8Array, headerOffsets: Uint32Array, out: Uint8Array, "
      "sortKey: Int32Array | null)";
  uint8_t *kinds = nullptr, *headers = nullptr, *out = nullptr;
  size_t kindsLen = 0, headersLen = 0, outLen = 0;
  if (info.Length() < 6 || !info[0].IsArray() || !info[1].IsNumber() || !uint8Bytes(info[2], kinds, kindsLen, false) ||
      !uint8Bytes(info[3], headers, headersLen, false) || !info[4].IsTypedArray() || !uint8Bytes(info[5], out, outLen)) {
    Napi::TypeError::New(env, usage).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  if (kindsLen == 0) {
    Napi::TypeError::New(env, "rowBinaryToNative: kinds is empty").ThrowAsJavaScriptException();
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
  // [fleet id, robot id, ts_ms] column indexes: two adjacent String columns and an 8-byte one, or null.
  int sortKey[3] = {-1, -1, -1};
  if (info.Length() > 6 && !info[6].IsNull() && !info[6].IsUndefined()) {
    bool ok = info[6].IsTypedArray() && info[6].As<Napi::TypedArray>().TypedArrayType() == napi_int32_array &&
              info[6].As<Napi::TypedArray>().ElementLength() == 3;
    if (ok) {
      Napi::Int32Array key = info[6].As<Napi::Int32Array>();
      for (int i = 0; i < 3; i++) {
        const int32_t c = key[i];
        ok = ok && c >= 0 && static_cast<size_t>(c) < kindsLen && kinds[c] == (i < 2 ? kString : kFixed8);
        sortKey[i] = c;
      }
      ok = ok && (sortKey[0] - sortKey[1] == 1 || sortKey[1] - sortKey[0] == 1);
    }
    if (!ok) {
      Napi::TypeError::New(env, "rowBinaryToNative: sortKey must be an Int32Array of [String column, the String column next to it, 8-byte column]")
          .ThrowAsJavaScriptException();
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
    if (!uint8Bytes(v, p, n, false)) {
      Napi::TypeError::New(env, "rowBinaryToNative: chunks must be Uint8Arrays over ArrayBuffers").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    chunks.push_back({p, n});
    keep.push_back(Napi::Persistent(v));
  }
  for (int i : {2, 3, 4, 5}) keep.push_back(Napi::Persistent(info[i]));
  auto* worker = new Converter(env, std::move(chunks), static_cast<uint64_t>(rowCount), std::vector<uint8_t>(kinds, kinds + kindsLen),
                               headers, std::move(headerOffsets), out, outLen, std::move(keep), sortKey[0], sortKey[1], sortKey[2]);
  Napi::Promise promise = worker->Promise();
  worker->Queue();  // deleted by node-addon-api after OnOK/OnError
  return promise;
}

// releasePages(buffer: Uint8Array): gives the physical pages inside the view back to the kernel
// (madvise MADV_DONTNEED; reads then see zeros). For a SharedArrayBuffer about to be dropped: V8 does
// not count shared memory toward starting a full GC, so a dropped one could otherwise stay resident
// until an unrelated full GC frees it (src/telemetry/store/native-insert.ts).
Napi::Value ReleasePages(const Napi::CallbackInfo& info) {
  return AdviseWholeBlocks(info, "releasePages(buffer: Uint8Array)", static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)), MADV_DONTNEED);
}

}  // namespace

void RegisterNativeBlock(Napi::Env env, Napi::Object exports) {
  exports.Set("rowBinaryToNative", Napi::Function::New(env, RowBinaryToNative));
  exports.Set("releasePages", Napi::Function::New(env, ReleasePages));
  exports.Set("rowBinaryToNativeCpuSeconds", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(gConvertCpuNs.load(std::memory_order_relaxed)) / 1e9);
  }));
}
