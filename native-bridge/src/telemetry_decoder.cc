// fleetgw telemetry decoder: a decode task (packed TelemetryBatch frames, see
// src/telemetry/decode/worker-protocol.ts) to RowBinary rows, each robot's newest row (its snapshot) and,
// for live robots, JSON "sample" messages, in one pass with no per-sample allocation.
//
// It must produce exactly what src/telemetry/decode/reference.ts (protobuf-es + the field table in
// src/telemetry/sample/sample-table.ts) produces, and reject exactly the frames protobuf-es rejects:
// test/telemetry/decoders.test.ts checks rows, snapshots, live messages and errors byte for byte
// against it and against the hand-rolled JS reader (src/telemetry/decode/fast-reader.ts, whose file
// comment lists protobuf-es's reading rules copied here). Numbers in JSON are spelled as JavaScript's
// Number.prototype.toString spells them (shortest round trip, ECMA-262 layout).
#include <napi.h>
#include "shared_copy.h"
#include "native_block.h"
#include "huge_buffer.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

namespace {

struct Corrupt {};

constexpr int kBatchSkipBudget = 99;
constexpr int kSampleSkipBudget = 98;
constexpr int kSubSkipBudget = 97;
constexpr size_t kFrameHeaderBytes = 16;
constexpr int kMaxErrors = 8;
// Reasons a robot string is bounded: the indexes of BOUND_REASONS in src/telemetry/sample/sample-table.ts,
// whose BOUND_LIMITS the JS side passes to every decodeTask (the limits live only there).
enum {
  kBoundMode, kBoundRunId, kBoundState, kBoundFault, kBoundMapId, kBoundLoadId, kBoundLoadType,
  kBoundFaults, kBoundLoadIds, kBoundLoadTypes, kBoundReasons
};

// ---------------------------------------------------------------------------------------------
// Output buffer: writes into the caller's destination (a task slot's rows region, or the main
// thread's row arena) while the output fits, so the rows are not copied once more at the end; past
// its end it moves what it wrote into its own storage (grows, never shrinks; one per thread, reused
// by every task) and goes on there.

struct Out {
  std::vector<uint8_t> own;
  uint8_t* b = nullptr;  // where bytes go: the destination, or own.data()
  size_t cap = 0;
  size_t pos = 0;
  bool external = false;
  void start(uint8_t* dest, size_t destLen) {
    pos = 0;
    external = dest != nullptr;
    b = external ? dest : own.data();
    cap = external ? destLen : own.size();
  }
  void ensure(size_t n) {
    if (pos + n > cap) grow(n);
  }
  void grow(size_t n) {
    size_t need = pos + n;
    if (external) {
      // Leaving the destination: what this thread owns is reused when it is large enough, else grown
      // to what this task needs (a 4 MiB slot must not make every thread keep 8 MiB). It used to be
      // doubled on every task that outgrew its destination, without bound: sparse samples make rows
      // 20x their frame bytes, so every task did, and the process aborted on std::bad_alloc.
      if (own.size() < need) own.resize(std::max(own.size() * 2, need + 4096));
      if (pos) std::memcpy(own.data(), b, pos);
      external = false;
    } else {
      own.resize(std::max(cap * 2, need + 4096));
    }
    b = own.data();
    cap = own.size();
  }
  // Gives back what this thread owns past kKeepOwnBytes, once a task's output has been copied out. A
  // task's rows are bounded by its frames (at most the batch size), but a batch of near-empty samples
  // is ~100x its bytes in rows: without this, one such batch would pin ~200 MiB per thread for good.
  static constexpr size_t kKeepOwnBytes = 16u << 20;
  void trim() {
    if (own.size() > kKeepOwnBytes) std::vector<uint8_t>().swap(own);
    b = nullptr;
    cap = 0;
  }
  void u8(uint8_t v) {
    ensure(1);
    b[pos++] = v;
  }
  void bytes(const uint8_t* p, size_t n) {
    ensure(n);
    if (n) std::memcpy(b + pos, p, n);
    pos += n;
  }
  void text(const char* s, size_t n) { bytes(reinterpret_cast<const uint8_t*>(s), n); }
  template <size_t N>
  void lit(const char (&s)[N]) { text(s, N - 1); }
};

// JavaScript's Number.prototype.toString(10) for a finite double (ECMA-262 Number::toString).
void jsNumber(Out& o, double v) {
  if (!std::isfinite(v)) {
    o.lit("null");
    return;
  }
  if (v == 0) {  // also -0, which JavaScript spells "0"
    o.u8('0');
    return;
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const char* p = buf;
  const char* end = r.ptr;
  if (*p == '-') {
    o.u8('-');
    p++;
  }
  char digits[32];
  int k = 0;
  while (p < end && *p != 'e') {
    if (*p != '.') digits[k++] = *p;
    p++;
  }
  p++;  // 'e'
  bool negExp = *p == '-';
  p++;
  int e = 0;
  while (p < end) e = e * 10 + (*p++ - '0');
  if (negExp) e = -e;
  int n = e + 1;
  if (k <= n && n <= 21) {
    o.text(digits, k);
    for (int i = 0; i < n - k; i++) o.u8('0');
  } else if (0 < n && n <= 21) {
    o.text(digits, n);
    o.u8('.');
    o.text(digits + n, k - n);
  } else if (-6 < n && n <= 0) {
    o.lit("0.");
    for (int i = 0; i < -n; i++) o.u8('0');
    o.text(digits, k);
  } else {
    o.u8(static_cast<uint8_t>(digits[0]));
    if (k > 1) {
      o.u8('.');
      o.text(digits + 1, k - 1);
    }
    o.u8('e');
    int x = n - 1;
    o.u8(x >= 0 ? '+' : '-');
    char eb[8];
    auto er = std::to_chars(eb, eb + sizeof eb, x >= 0 ? x : -x);
    o.text(eb, er.ptr - eb);
  }
}

void intText(Out& o, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  o.text(buf, r.ptr - buf);
}

// JavaScript's `Math.trunc(v)` as an int64 the way ByteWriter.i64 writes it (0 for NaN/Infinity,
// modulo 2^64 beyond the int64 range).
uint64_t truncToInt64Bits(double v) {
  if (!std::isfinite(v)) return 0;
  double t = std::trunc(v);
  if (t >= -9223372036854775808.0 && t < 9223372036854775808.0) return static_cast<uint64_t>(static_cast<int64_t>(t));
  double m = std::fmod(t, 18446744073709551616.0);
  if (m < 0) m += 18446744073709551616.0;
  return static_cast<uint64_t>(m);
}

// ---------------------------------------------------------------------------------------------
// Reader: protobuf-es's BinaryReader rules (see fast-reader.ts)
//
// Why this shape: the reader's position lives in a register only while no call outside the inlined
// fast paths can see the Reader. So the common cases (one-byte tags and lengths, a varint that ends
// inside the frame, ASCII strings) are inline, and everything else goes to out-of-line functions
// that take the position by value and return the new one (perf: with a Reader& passed around, every
// byte read stored and reloaded the position through memory; bench/notes/telemetry-ingest.md, "The C++ decoder").

#if defined(__GNUC__)
#define FLEETGW_INLINE inline __attribute__((always_inline))
#define FLEETGW_NOINLINE __attribute__((noinline))
#define FLEETGW_COLD __attribute__((noinline, cold))
#else
#define FLEETGW_INLINE inline
#define FLEETGW_NOINLINE
#define FLEETGW_COLD
#endif

struct U32At {
  uint32_t v;
  size_t pos;
};
struct U64At {
  uint64_t v;
  size_t pos;
};

// Reads past `end` see 0 and advance; the caller's bounds check then fails.
FLEETGW_INLINE uint8_t byteAt(const uint8_t* u8, size_t end, size_t& p) {
  size_t q = p++;
  return q < end ? u8[q] : 0;
}

// A uint32 varint, any length (protobuf-es: up to 10 bytes, the bits past 32 dropped).
FLEETGW_NOINLINE U32At uint32Slow(const uint8_t* u8, size_t pos, size_t end) {
  uint32_t b = byteAt(u8, end, pos);
  uint32_t r = b & 0x7f;
  for (int shift = 7; shift <= 21 && (b & 0x80); shift += 7) {
    b = byteAt(u8, end, pos);
    r |= (b & 0x7f) << shift;
  }
  if (b & 0x80) {
    b = byteAt(u8, end, pos);
    r |= (b & 0x0f) << 28;
    for (int n = 5; (b & 0x80) && n < 10; n++) b = byteAt(u8, end, pos);
    if (b & 0x80) throw Corrupt{};
  }
  if (pos > end) throw Corrupt{};
  return {r, pos};
}

// A uint64 varint near the frame's end, or a corrupt one.
FLEETGW_COLD U64At varint64Slow(const uint8_t* u8, size_t pos, size_t end) {
  uint64_t v = 0;
  for (int shift = 0; shift <= 63; shift += 7) {
    uint64_t b = byteAt(u8, end, pos);
    v |= (b & 0x7f) << shift;  // bits past 63 fall off, as in protobuf-es
    if (!(b & 0x80)) {
      if (pos > end) throw Corrupt{};
      return {v, pos};
    }
  }
  throw Corrupt{};
}

// A tag longer than one byte: fieldNo << 3 | wireType, validated.
FLEETGW_COLD U32At tagSlow(const uint8_t* u8, size_t pos, size_t end) {
  U32At t = uint32Slow(u8, pos, end);
  size_t n = t.pos - pos;
  if (n > 5 || (n == 5 && u8[t.pos - 1] > 0x0f)) throw Corrupt{};
  if ((t.v >> 3) == 0 || (t.v & 7) > 5) throw Corrupt{};
  return t;
}

// UTF-8 check of [s, e) from its first non-ASCII byte (WHATWG, fatal).
FLEETGW_COLD void checkUtf8(const uint8_t* u8, size_t i, size_t e) {
  while (i < e) {
    uint8_t b = u8[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    int need;
    uint8_t lo = 0x80, hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b == 0xe0) lo = 0xa0;
      else if (b == 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b == 0xf0) lo = 0x90;
      else if (b == 0xf4) hi = 0x8f;
    } else {
      throw Corrupt{};
    }
    if (i + need >= e) throw Corrupt{};
    if (u8[i + 1] < lo || u8[i + 1] > hi) throw Corrupt{};
    for (int k = 2; k <= need; k++)
      if (u8[i + k] < 0x80 || u8[i + k] > 0xbf) throw Corrupt{};
    i += need + 1;
  }
}

size_t skipField(const uint8_t* u8, size_t pos, size_t end, uint32_t wireType, uint32_t fieldNo, int budget);

struct Reader {
  const uint8_t* u8;
  size_t pos;
  size_t end;  // the frame's end: reads past it see 0 and fail the next bounds check

  FLEETGW_INLINE uint32_t uint32() {
    if (pos < end && u8[pos] < 0x80) return u8[pos++];
    // Two bytes: a sample's length once it is over 127 bytes.
    if (pos + 2 <= end && u8[pos + 1] < 0x80) {
      uint32_t v = (u8[pos] & 0x7fu) | (static_cast<uint32_t>(u8[pos + 1]) << 7);
      pos += 2;
      return v;
    }
    U32At r = uint32Slow(u8, pos, end);
    pos = r.pos;
    return r.v;
  }
  FLEETGW_INLINE uint64_t varint64() {
    // A varint that ends before the frame does (a timestamp is 6 bytes): one bounds check for all of it.
    if (pos + 10 <= end) {
      uint64_t v = 0;
      const uint8_t* p = u8 + pos;
      for (int i = 0; i < 10; i++) {
        uint64_t b = p[i];
        v |= (b & 0x7f) << (7 * i);  // bits past 63 fall off, as in protobuf-es
        if (!(b & 0x80)) {
          pos += i + 1;
          return v;
        }
      }
      throw Corrupt{};
    }
    U64At r = varint64Slow(u8, pos, end);
    pos = r.pos;
    return r.v;
  }
  // fieldNo << 3 | wireType, validated.
  FLEETGW_INLINE uint32_t tag() {
    if (pos < end && u8[pos] < 0x80) {
      uint32_t t = u8[pos++];
      if ((t >> 3) == 0 || (t & 7) > 5) throw Corrupt{};
      return t;
    }
    U32At t = tagSlow(u8, pos, end);
    pos = t.pos;
    return t.v;
  }
  FLEETGW_INLINE void skip(uint32_t wireType, uint32_t fieldNo, int budget) { pos = skipField(u8, pos, end, wireType, fieldNo, budget); }
  FLEETGW_INLINE bool boolean() {
    if (pos < end && u8[pos] < 0x80) return u8[pos++] != 0;
    return varint64() != 0;
  }
  FLEETGW_INLINE double f64() {
    if (pos + 8 > end) throw Corrupt{};
    double v;
    std::memcpy(&v, u8 + pos, 8);
    pos += 8;
    return v;
  }
  FLEETGW_INLINE float f32() {
    if (pos + 4 > end) throw Corrupt{};
    float v;
    std::memcpy(&v, u8 + pos, 4);
    pos += 4;
    return v;
  }
  // A length-delimited string; UTF-8 checked (WHATWG, fatal). Returns its [start, end).
  FLEETGW_INLINE void str(size_t& s, size_t& e) {
    uint32_t len = uint32();
    s = pos;
    pos += len;
    if (pos > end) throw Corrupt{};
    e = pos;
    for (size_t i = s; i < e; i++) {
      if (u8[i] >= 0x80) {
        checkUtf8(u8, i, e);
        break;
      }
    }
  }
  FLEETGW_INLINE size_t subEnd() {
    uint32_t len = uint32();
    return pos + len;
  }
};

// Skips one field of `wireType`; returns the position after it. Groups nest at most `budget` deep.
FLEETGW_COLD size_t skipField(const uint8_t* u8, size_t pos, size_t end, uint32_t wireType, uint32_t fieldNo, int budget) {
  Reader r{u8, pos, end};
  switch (wireType) {
    case 0:
      while (byteAt(u8, end, r.pos) & 0x80) {
      }
      break;
    case 1:
      r.pos += 8;
      break;
    case 5:
      r.pos += 4;
      break;
    case 2: {
      uint32_t len = r.uint32();
      r.pos += len;
      break;
    }
    case 3:
      if (budget <= 0) throw Corrupt{};
      for (;;) {
        uint32_t t = r.tag();
        if ((t & 7) == 4) {
          if ((t >> 3) != fieldNo) throw Corrupt{};
          break;
        }
        r.pos = skipField(u8, r.pos, end, t & 7, t >> 3, budget - 1);
      }
      break;
    default:
      throw Corrupt{};
  }
  if (r.pos > end) throw Corrupt{};
  return r.pos;
}

// One sample's values; strings are [start, end) in the frame.
struct Sample {
  int64_t ts = 0;
  double d[11] = {};
  float f[5] = {};
  bool charging = false, estop = false;
  int32_t gpsFix = 0, stepIndex = 0, level = 0, loadCount = 0;
  size_t modeS = 0, modeE = 0, runS = 0, runE = 0, stateS = 0, stateE = 0, mapS = 0, mapE = 0;
  // start, end pairs (capacity kept between samples)
  std::vector<size_t> faults, loadIds, loadTypes;
  // Copied from zeros, not memset: GCC turns a memset of these 88 bytes (or a loop storing 0) into
  // `rep stos`, whose start-up cost was ~10% of a sample's decode (perf annotate: bench/notes/telemetry-ingest.md, "The C++ decoder"); a copy
  // from a constant zero array becomes plain 16-byte stores.
  void reset() {
    static const double kZeroD[11] = {};
    static const float kZeroF[5] = {};
    ts = 0;
    std::memcpy(d, kZeroD, sizeof d);
    std::memcpy(f, kZeroF, sizeof f);
    charging = estop = false;
    gpsFix = stepIndex = level = loadCount = 0;
    modeS = modeE = runS = runE = stateS = stateE = mapS = mapE = 0;
    faults.clear();
    loadIds.clear();
    loadTypes.clear();
  }
};
enum { D_LAT, D_LON, D_ELEV, D_X, D_Y, D_Z, D_HEAD, D_LIN, D_ANG, D_REM, D_ETA };
enum { F_PCT, F_VOLT, F_PROG, F_CPU, F_LOADW };

// The end of the longest prefix of valid UTF-8 [s, e) of at most `max` bytes ending on a character
// boundary (sample-table.ts utf8CutEnd).
inline size_t utf8CutEnd(const uint8_t* u8, size_t s, size_t e, uint32_t max) {
  if (e - s <= max) return e;
  size_t c = s + max;
  while (c > s && (u8[c] & 0xc0) == 0x80) c--;
  return c;
}

// Bounds a string list: its first `limits[items]` strings, each cut to `limits[each]` bytes.
void boundList(const uint8_t* u8, std::vector<size_t>& list, int each, int items, const uint32_t* limits, uint32_t* counts) {
  size_t n = list.size() / 2;
  if (n > limits[items]) {
    counts[items] += static_cast<uint32_t>(n - limits[items]);
    list.resize(static_cast<size_t>(limits[items]) * 2);
  }
  for (size_t i = 0; i < list.size(); i += 2) {
    size_t c = utf8CutEnd(u8, list[i], list[i + 1], limits[each]);
    if (c != list[i + 1]) {
      list[i + 1] = c;
      counts[each]++;
    }
  }
}

// Bounds the sample's final strings (sample-table.ts `bound`), counting each cut in `counts`.
void boundSample(const uint8_t* u8, Sample& s, const uint32_t* limits, uint32_t* counts) {
  size_t c = utf8CutEnd(u8, s.modeS, s.modeE, limits[kBoundMode]);
  if (c != s.modeE) {
    s.modeE = c;
    counts[kBoundMode]++;
  }
  c = utf8CutEnd(u8, s.runS, s.runE, limits[kBoundRunId]);
  if (c != s.runE) {
    s.runE = c;
    counts[kBoundRunId]++;
  }
  c = utf8CutEnd(u8, s.stateS, s.stateE, limits[kBoundState]);
  if (c != s.stateE) {
    s.stateE = c;
    counts[kBoundState]++;
  }
  boundList(u8, s.faults, kBoundFault, kBoundFaults, limits, counts);
  c = utf8CutEnd(u8, s.mapS, s.mapE, limits[kBoundMapId]);
  if (c != s.mapE) {
    s.mapE = c;
    counts[kBoundMapId]++;
  }
  boundList(u8, s.loadIds, kBoundLoadId, kBoundLoadIds, limits, counts);
  boundList(u8, s.loadTypes, kBoundLoadType, kBoundLoadTypes, limits, counts);
}

// Reads one Sample message ending at msgEnd; returns the position after it. The reader is local so
// its position stays in a register (see Reader).
size_t readSample(const uint8_t* u8, size_t pos, size_t end, size_t msgEnd, Sample& s) {
  Reader r{u8, pos, end};
  s.reset();
  while (r.pos < msgEnd) {
    uint32_t t = r.tag();
    switch (t >> 3) {
      case 1:
        s.ts = static_cast<int64_t>(r.varint64());
        break;
      case 2: {
        size_t e = r.subEnd();
        while (r.pos < e) {
          uint32_t u = r.tag();
          switch (u >> 3) {
            case 1: s.d[D_LAT] = r.f64(); break;
            case 2: s.d[D_LON] = r.f64(); break;
            case 3: s.d[D_ELEV] = r.f64(); break;
            default: r.skip(u & 7, u >> 3, kSubSkipBudget);
          }
        }
        break;
      }
      case 3: {
        size_t e = r.subEnd();
        while (r.pos < e) {
          uint32_t u = r.tag();
          switch (u >> 3) {
            case 1: s.d[D_X] = r.f64(); break;
            case 2: s.d[D_Y] = r.f64(); break;
            case 3: s.d[D_Z] = r.f64(); break;
            case 4: s.d[D_HEAD] = r.f64(); break;
            default: r.skip(u & 7, u >> 3, kSubSkipBudget);
          }
        }
        break;
      }
      case 4: {
        size_t e = r.subEnd();
        while (r.pos < e) {
          uint32_t u = r.tag();
          switch (u >> 3) {
            case 1: s.d[D_LIN] = r.f64(); break;
            case 2: s.d[D_ANG] = r.f64(); break;
            default: r.skip(u & 7, u >> 3, kSubSkipBudget);
          }
        }
        break;
      }
      case 5: {
        size_t e = r.subEnd();
        while (r.pos < e) {
          uint32_t u = r.tag();
          switch (u >> 3) {
            case 1: s.f[F_PCT] = r.f32(); break;
            case 2: s.f[F_VOLT] = r.f32(); break;
            case 3: s.charging = r.boolean(); break;
            default: r.skip(u & 7, u >> 3, kSubSkipBudget);
          }
        }
        break;
      }
      case 6:
        r.str(s.modeS, s.modeE);
        break;
      case 7:
        s.estop = r.boolean();
        break;
      case 8: {
        size_t e = r.subEnd();
        while (r.pos < e) {
          uint32_t u = r.tag();
          switch (u >> 3) {
            case 1: r.str(s.runS, s.runE); break;
            case 2: r.str(s.stateS, s.stateE); break;
            case 3: s.f[F_PROG] = r.f32(); break;
            case 4: s.stepIndex = static_cast<int32_t>(r.uint32()); break;
            case 5: s.d[D_REM] = r.f64(); break;
            case 6: s.d[D_ETA] = r.f64(); break;
            default: r.skip(u & 7, u >> 3, kSubSkipBudget);
          }
        }
        break;
      }
      case 9: {
        size_t e = r.subEnd();
        while (r.pos < e) {
          uint32_t u = r.tag();
          switch (u >> 3) {
            case 1: s.level = static_cast<int32_t>(r.uint32()); break;
            case 2: {
              size_t a, b;
              r.str(a, b);
              s.faults.push_back(a);
              s.faults.push_back(b);
              break;
            }
            case 3: s.f[F_CPU] = r.f32(); break;
            default: r.skip(u & 7, u >> 3, kSubSkipBudget);
          }
        }
        break;
      }
      case 10:
        s.gpsFix = static_cast<int32_t>(r.uint32());
        break;
      case 11:
        r.str(s.mapS, s.mapE);
        break;
      case 12: {
        size_t e = r.subEnd();
        while (r.pos < e) {
          uint32_t u = r.tag();
          switch (u >> 3) {
            case 1: s.loadCount = static_cast<int32_t>(r.uint32()); break;
            case 2: {
              size_t a, b;
              r.str(a, b);
              s.loadIds.push_back(a);
              s.loadIds.push_back(b);
              break;
            }
            case 3: {
              size_t a, b;
              r.str(a, b);
              s.loadTypes.push_back(a);
              s.loadTypes.push_back(b);
              break;
            }
            case 4: s.f[F_LOADW] = r.f32(); break;
            default: r.skip(u & 7, u >> 3, kSubSkipBudget);
          }
        }
        break;
      }
      default:
        r.skip(t & 7, t >> 3, kSampleSkipBudget);
    }
  }
  return r.pos;
}

// Writes one row with a single bounds check: writeRow reserves rowBytes() first. Unchecked writes
// because the row is written once per sample and Out's per-field checks were a measurable share of
// it (bench/notes/telemetry-ingest.md, "The C++ decoder").
struct RowPtr {
  uint8_t* p;
  void bytes(const uint8_t* s, size_t n) {
    std::memcpy(p, s, n);
    p += n;
  }
  void u8(uint8_t v) { *p++ = v; }
  void u32le(uint32_t v) {
    std::memcpy(p, &v, 4);
    p += 4;
  }
  void u64le(uint64_t v) {
    std::memcpy(p, &v, 8);
    p += 8;
  }
  void f64(double v) {
    uint64_t bits;
    if (std::isnan(v)) bits = 0x7ff8000000000000ULL;
    else std::memcpy(&bits, &v, 8);
    u64le(bits);
  }
  void f32(float v) {
    uint32_t bits;
    if (std::isnan(v)) bits = 0x7fc00000U;
    else std::memcpy(&bits, &v, 4);
    u32le(bits);
  }
  void varuint(uint64_t v) {
    while (v >= 0x80) {
      *p++ = static_cast<uint8_t>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<uint8_t>(v);
  }
  void str(const uint8_t* u8, size_t s, size_t e) {
    varuint(e - s);
    bytes(u8 + s, e - s);
  }
};

size_t varuintBytes(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

// Exactly the bytes writeRow writes for this sample (it checks): so rows leave their destination only
// when they do not fit, as with a check per field, and a column added to writeRow but not here fails
// every test that writes a row instead of writing past a task slot or the row arena.
size_t listBytes(const std::vector<size_t>& list) {
  size_t n = varuintBytes(list.size() / 2);
  for (size_t i = 0; i < list.size(); i += 2) n += varuintBytes(list[i + 1] - list[i]) + list[i + 1] - list[i];
  return n;
}

size_t rowBytes(size_t idsLen, const Sample& s) {
  constexpr size_t kFixed = 8 + 8 + 9 * 8 + 4 + 4 + 1 + 1 + 4 + 4 + 4 + 8 + 8 + 1 + 4 + 4 + 4;
  size_t n = idsLen + kFixed;
  n += varuintBytes(s.modeE - s.modeS) + (s.modeE - s.modeS);
  n += varuintBytes(s.runE - s.runS) + (s.runE - s.runS);
  n += varuintBytes(s.stateE - s.stateS) + (s.stateE - s.stateS);
  n += listBytes(s.faults);
  n += varuintBytes(s.mapE - s.mapS) + (s.mapE - s.mapS);
  n += listBytes(s.loadIds);
  n += listBytes(s.loadTypes);
  return n;
}

void writeRow(Out& o, const uint8_t* u8, const uint8_t* ids, size_t idsLen, uint64_t receivedAtBits, const Sample& s) {
  const size_t n = rowBytes(idsLen, s);
  o.ensure(n);
  uint8_t* const start = o.b + o.pos;
  RowPtr w{start};
  w.bytes(ids, idsLen);
  w.u64le(static_cast<uint64_t>(s.ts));
  w.u64le(receivedAtBits);
  for (int i = D_LAT; i <= D_ANG; i++) w.f64(s.d[i]);
  w.f32(s.f[F_PCT]);
  w.f32(s.f[F_VOLT]);
  w.u8(s.charging ? 1 : 0);
  w.str(u8, s.modeS, s.modeE);
  w.u8(s.estop ? 1 : 0);
  w.u32le(static_cast<uint32_t>(s.gpsFix));
  w.str(u8, s.runS, s.runE);
  w.str(u8, s.stateS, s.stateE);
  w.f32(s.f[F_PROG]);
  w.u32le(static_cast<uint32_t>(s.stepIndex));
  w.f64(s.d[D_REM]);
  w.f64(s.d[D_ETA]);
  w.u8(static_cast<uint8_t>(s.level >= 0 && s.level <= 3 ? s.level : 0));
  w.varuint(s.faults.size() / 2);
  for (size_t i = 0; i < s.faults.size(); i += 2) w.str(u8, s.faults[i], s.faults[i + 1]);
  w.f32(s.f[F_CPU]);
  w.str(u8, s.mapS, s.mapE);
  w.u32le(static_cast<uint32_t>(s.loadCount));
  w.varuint(s.loadIds.size() / 2);
  for (size_t i = 0; i < s.loadIds.size(); i += 2) w.str(u8, s.loadIds[i], s.loadIds[i + 1]);
  w.varuint(s.loadTypes.size() / 2);
  for (size_t i = 0; i < s.loadTypes.size(); i += 2) w.str(u8, s.loadTypes[i], s.loadTypes[i + 1]);
  w.f32(s.f[F_LOADW]);
  if (static_cast<size_t>(w.p - start) != n) {
    // A programming error (rowBytes out of step with the writes above), and memory past the
    // reservation may already be overwritten: stop rather than go on with it.
    std::fputs("fleetgw telemetry decoder: rowBytes() does not match writeRow()\n", stderr);
    std::abort();
  }
  o.pos += n;
}

// A JSON string of UTF-8 bytes, escaped as JSON.stringify does.
void jsonString(Out& o, const uint8_t* u8, size_t s, size_t e) {
  static const char hex[] = "0123456789abcdef";
  o.u8('"');
  size_t run = s;
  for (size_t i = s; i < e; i++) {
    uint8_t c = u8[i];
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    o.bytes(u8 + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': o.lit("\\\""); break;
      case '\\': o.lit("\\\\"); break;
      case 0x08: o.lit("\\b"); break;
      case 0x09: o.lit("\\t"); break;
      case 0x0a: o.lit("\\n"); break;
      case 0x0c: o.lit("\\f"); break;
      case 0x0d: o.lit("\\r"); break;
      default: {
        char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        o.text(u, 6);
      }
    }
  }
  o.bytes(u8 + run, e - run);
  o.u8('"');
}

// The JSON strings of a list, comma-separated (the brackets are the caller's).
void jsonList(Out& o, const uint8_t* u8, const std::vector<size_t>& list) {
  for (size_t i = 0; i < list.size(); i += 2) {
    if (i > 0) o.u8(',');
    jsonString(o, u8, list[i], list[i + 1]);
  }
}

void writeLive(Out& o, const uint8_t* u8, const uint8_t* prefix, size_t prefixLen, double receivedAtMs, const Sample& s) {
  static const char* levels[] = {"\"unspecified\"", "\"ok\"", "\"warn\"", "\"error\""};
  o.bytes(prefix, prefixLen);
  intText(o, s.ts);
  o.lit(",\"received_at_ms\":");
  jsNumber(o, receivedAtMs);
  o.lit(",\"latitude\":");
  jsNumber(o, s.d[D_LAT]);
  o.lit(",\"longitude\":");
  jsNumber(o, s.d[D_LON]);
  o.lit(",\"elevation_m\":");
  jsNumber(o, s.d[D_ELEV]);
  o.lit(",\"pose\":{\"x_m\":");
  jsNumber(o, s.d[D_X]);
  o.lit(",\"y_m\":");
  jsNumber(o, s.d[D_Y]);
  o.lit(",\"z_m\":");
  jsNumber(o, s.d[D_Z]);
  o.lit(",\"heading_deg\":");
  jsNumber(o, s.d[D_HEAD]);
  o.lit("},\"velocity\":{\"linear_mps\":");
  jsNumber(o, s.d[D_LIN]);
  o.lit(",\"angular_dps\":");
  jsNumber(o, s.d[D_ANG]);
  o.lit("},\"battery\":{\"percent\":");
  jsNumber(o, s.f[F_PCT]);
  o.lit(",\"voltage_v\":");
  jsNumber(o, s.f[F_VOLT]);
  if (s.charging) o.lit(",\"charging\":true},\"mode\":");
  else o.lit(",\"charging\":false},\"mode\":");
  jsonString(o, u8, s.modeS, s.modeE);
  if (s.estop) o.lit(",\"estop\":true,\"gps_fix\":");
  else o.lit(",\"estop\":false,\"gps_fix\":");
  intText(o, s.gpsFix);
  if (s.runE == s.runS) {
    o.lit(",\"mission\":null");
  } else {
    o.lit(",\"mission\":{\"run_id\":");
    jsonString(o, u8, s.runS, s.runE);
    o.lit(",\"mission_state\":");
    jsonString(o, u8, s.stateS, s.stateE);
    o.lit(",\"mission_progress_pct\":");
    jsNumber(o, s.f[F_PROG]);
    o.lit(",\"current_step_index\":");
    intText(o, s.stepIndex);
    o.lit(",\"remaining_distance_m\":");
    jsNumber(o, s.d[D_REM]);
    o.lit(",\"estimated_time_remaining_s\":");
    jsNumber(o, s.d[D_ETA]);
    o.u8('}');
  }
  o.lit(",\"health\":{\"level\":");
  const char* lv = levels[s.level >= 0 && s.level <= 3 ? s.level : 0];
  o.text(lv, std::strlen(lv));
  o.lit(",\"faults\":[");
  for (size_t i = 0; i < s.faults.size(); i += 2) {
    if (i > 0) o.u8(',');
    jsonString(o, u8, s.faults[i], s.faults[i + 1]);
  }
  o.lit("],\"cpu_temp_c\":");
  jsNumber(o, s.f[F_CPU]);
  o.lit("},\"map_id\":");
  jsonString(o, u8, s.mapS, s.mapE);
  o.lit(",\"loads\":{\"count\":");
  intText(o, s.loadCount);
  o.lit(",\"ids\":[");
  jsonList(o, u8, s.loadIds);
  o.lit("],\"types\":[");
  jsonList(o, u8, s.loadTypes);
  o.lit("],\"weight_kg\":");
  jsNumber(o, s.f[F_LOADW]);
  o.lit("}}");
}

// Per-thread state reused across tasks: one per addon instance, that is one per Node environment
// (the main thread and each decode worker load the addon into their own environment), kept as the
// instance data. Not `thread_local`: in a dlopen'ed library every access to a thread_local goes
// through __tls_get_addr, and GCC recomputes the address at each use instead of keeping it in a
// register (176 calls in the decode loop; perf: 27% of a task's time).
struct ThreadState {
  Out rows, live;
  Sample sample;
  std::vector<uint32_t> liveIndex;
  std::vector<int64_t> snapStart, snapEnd, snapTs;
};

Napi::ArrayBuffer copyOut(Napi::Env env, const Out& o) {
  Napi::ArrayBuffer ab = Napi::ArrayBuffer::New(env, o.pos);
  if (o.pos) std::memcpy(ab.Data(), o.b, o.pos);
  return ab;
}

// The bytes of a typed array, whether its buffer is an ArrayBuffer or a SharedArrayBuffer (a task
// slot: task-slots.ts). napi_get_arraybuffer_info refuses a SharedArrayBuffer, so the data pointer
// comes from the view itself (already offset by its byteOffset). nullptr when `v` is not a typed array.
uint8_t* bytesOf(const Napi::Value& v, size_t& len) {
  napi_typedarray_type type;
  size_t count = 0;
  void* data = nullptr;
  len = 0;
  if (!v.IsTypedArray() || napi_get_typedarray_info(v.Env(), v, &type, &count, &data, nullptr, nullptr) != napi_ok) return nullptr;
  len = v.As<Napi::TypedArray>().ByteLength();
  return static_cast<uint8_t*>(data);
}

// decodeTask(frames: Uint8Array, frameCount, ids: Uint8Array, idOffsets: Uint32Array,
//            live: Uint8Array | null, liveOffsets: Uint32Array | null, rowsInto: Uint8Array | undefined,
//            bounds: Uint32Array (BOUND_LIMITS, kBoundReasons entries))
// -> { rows, rowsLength, rowCount, snapshots: Uint32Array, snapshotTs: Float64Array, live, liveIndex, corrupt, faults: Int32Array,
//      bounded: Uint32Array | null (robotIndex, reason, count) triples }
// The rows are written into `rowsInto` (the task's shared slot, or the main thread's row arena) while
// they fit, and `rows` is then undefined; once they outgrow it, `rows` is a new ArrayBuffer (also when
// a corrupt frame rolled back afterwards leaves fewer bytes than `rowsInto` holds). `frames` may be a view of a SharedArrayBuffer.
// ids[i] = bytes [idOffsets[i], idOffsets[i+1]): robot index i's RowBinary robot and fleet ids;
// live[i] likewise its live message prefix (empty: not live).
Napi::Value DecodeTask(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  size_t byteLength = 0;
  const uint8_t* u8 = bytesOf(info[0], byteLength);
  int64_t frameCount = info[1].As<Napi::Number>().Int64Value();
  size_t idsLen, idOffLen;
  const uint8_t* ids = bytesOf(info[2], idsLen);
  const uint32_t* idOff = reinterpret_cast<const uint32_t*>(bytesOf(info[3], idOffLen));
  if (u8 == nullptr || ids == nullptr || idOff == nullptr || idOffLen < 4) {
    Napi::TypeError::New(env, "decodeTask: frames, ids and idOffsets must be typed arrays").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  size_t robots = idOffLen / 4 - 1;
  const uint8_t* live = nullptr;
  const uint32_t* liveOff = nullptr;
  if (info[4].IsTypedArray()) {
    size_t a, b;
    live = bytesOf(info[4], a);
    liveOff = reinterpret_cast<const uint32_t*>(bytesOf(info[5], b));
  }

  size_t limitsLen = 0;
  const uint32_t* limits = info.Length() > 7 ? reinterpret_cast<const uint32_t*>(bytesOf(info[7], limitsLen)) : nullptr;
  if (limits == nullptr || limitsLen < kBoundReasons * 4) {
    Napi::TypeError::New(env, "decodeTask: bounds must be a Uint32Array of the string limits (BOUND_LIMITS)").ThrowAsJavaScriptException();
    return env.Undefined();
  }

  ThreadState& st = *env.GetInstanceData<ThreadState>();
  size_t intoLen = 0;
  uint8_t* into = info.Length() > 6 ? bytesOf(info[6], intoLen) : nullptr;
  st.rows.start(into, intoLen);
  st.live.start(nullptr, 0);
  st.liveIndex.clear();
  std::vector<int32_t> faults;
  std::vector<uint32_t> bounded;
  int64_t corrupt = 0;
  int64_t rowCount = 0;
  int errors = 0;
  size_t off = 0;
  // std::bad_alloc (growing the rows, live or index buffers) fails this task with a JavaScript error,
  // which the ingest reports as a faulted task, instead of terminating the process.
  try {
    st.snapStart.assign(robots, -1);
    st.snapEnd.assign(robots, 0);
    st.snapTs.assign(robots, 0);
    for (int64_t frame = 0; frame < frameCount; frame++) {
      if (off + kFrameHeaderBytes > byteLength) {
        faults.insert(faults.end(), {1, static_cast<int32_t>(frame), 0, 0});
        corrupt += frameCount - frame;
        break;
      }
      uint32_t ri, len;
      double receivedAtMs;
      std::memcpy(&ri, u8 + off, 4);
      std::memcpy(&len, u8 + off + 4, 4);
      std::memcpy(&receivedAtMs, u8 + off + 8, 8);
      size_t start = off + kFrameHeaderBytes;
      off = start + len;
      if (ri >= robots || off > byteLength) {
        faults.insert(faults.end(), {2, static_cast<int32_t>(frame), static_cast<int32_t>(ri), static_cast<int32_t>(len)});
        corrupt += frameCount - frame;
        break;
      }
      const uint8_t* rid = ids + idOff[ri];
      size_t ridLen = idOff[ri + 1] - idOff[ri];
      const uint8_t* prefix = live ? live + liveOff[ri] : nullptr;
      size_t prefixLen = live ? liveOff[ri + 1] - liveOff[ri] : 0;
      // Marks for the rollback.
      size_t mRows = st.rows.pos, mLive = st.live.pos, mLiveIndex = st.liveIndex.size();
      int64_t mRowCount = rowCount, mStart = st.snapStart[ri], mEnd = st.snapEnd[ri], mTs = st.snapTs[ri];
      const uint64_t receivedAtBits = truncToInt64Bits(receivedAtMs);  // one per frame, not per row
      uint32_t counts[kBoundReasons] = {};
      try {
        Reader r{u8, start, off};
        while (r.pos < r.end) {
          uint32_t t = r.tag();
          if ((t >> 3) != 1) {
            // seq (2) and epoch (3) are uint64: read as varints whatever the wire type, as protobuf-es
            // reads a known scalar (the main thread read them already; rows do not carry them).
            if ((t >> 3) == 2 || (t >> 3) == 3) r.varint64();
            else r.skip(t & 7, t >> 3, kBatchSkipBudget);
            continue;
          }
          size_t e = r.subEnd();
          r.pos = readSample(u8, r.pos, r.end, e, st.sample);
          boundSample(u8, st.sample, limits, counts);
          size_t rowStart = st.rows.pos;
          writeRow(st.rows, u8, rid, ridLen, receivedAtBits, st.sample);
          rowCount++;
          if (st.snapStart[ri] == -1 || st.sample.ts >= st.snapTs[ri]) {
            st.snapStart[ri] = static_cast<int64_t>(rowStart);
            st.snapEnd[ri] = static_cast<int64_t>(st.rows.pos);
            st.snapTs[ri] = st.sample.ts;
          }
          if (prefixLen > 0) {
            size_t ls = st.live.pos;
            writeLive(st.live, u8, prefix, prefixLen, receivedAtMs, st.sample);
            st.liveIndex.insert(st.liveIndex.end(), {ri, static_cast<uint32_t>(ls), static_cast<uint32_t>(st.live.pos)});
          }
        }
        for (uint32_t k = 0; k < kBoundReasons; k++)
          if (counts[k] != 0) bounded.insert(bounded.end(), {ri, k, counts[k]});
      } catch (const Corrupt&) {
        st.rows.pos = mRows;
        st.live.pos = mLive;
        st.liveIndex.resize(mLiveIndex);
        rowCount = mRowCount;
        st.snapStart[ri] = mStart;
        st.snapEnd[ri] = mEnd;
        st.snapTs[ri] = mTs;
        corrupt++;
        if (errors < kMaxErrors) {
          errors++;
          faults.insert(faults.end(), {3, static_cast<int32_t>(frame), static_cast<int32_t>(ri), static_cast<int32_t>(len)});
        }
      }
    }
  } catch (const std::bad_alloc&) {
    Napi::Error::New(env, "decodeTask: out of memory").ThrowAsJavaScriptException();
    return env.Undefined();
  }

  Napi::Object result = Napi::Object::New(env);
  if (st.rows.external) {
    result.Set("rows", env.Undefined());
  } else {
    result.Set("rows", copyOut(env, st.rows));
  }
  result.Set("rowsLength", Napi::Number::New(env, static_cast<double>(st.rows.pos)));
  result.Set("rowCount", Napi::Number::New(env, static_cast<double>(rowCount)));
  size_t snaps = 0;
  for (size_t i = 0; i < robots; i++)
    if (st.snapStart[i] != -1) snaps++;
  Napi::Uint32Array snapIdx = Napi::Uint32Array::New(env, snaps * 3);
  Napi::Float64Array snapTs = Napi::Float64Array::New(env, snaps);
  size_t k = 0;
  for (size_t i = 0; i < robots; i++) {
    if (st.snapStart[i] == -1) continue;
    snapIdx[k * 3] = static_cast<uint32_t>(i);
    snapIdx[k * 3 + 1] = static_cast<uint32_t>(st.snapStart[i]);
    snapIdx[k * 3 + 2] = static_cast<uint32_t>(st.snapEnd[i]);
    snapTs[k++] = static_cast<double>(st.snapTs[i]);
  }
  result.Set("snapshots", snapIdx);
  result.Set("snapshotTs", snapTs);
  if (!st.liveIndex.empty()) {
    result.Set("live", copyOut(env, st.live));
    Napi::Uint32Array li = Napi::Uint32Array::New(env, st.liveIndex.size());
    std::memcpy(li.Data(), st.liveIndex.data(), st.liveIndex.size() * 4);
    result.Set("liveIndex", li);
  } else {
    result.Set("live", env.Null());
    result.Set("liveIndex", env.Null());
  }
  st.rows.trim();  // after the copies out above
  st.live.trim();
  result.Set("corrupt", Napi::Number::New(env, static_cast<double>(corrupt)));
  Napi::Int32Array fa = Napi::Int32Array::New(env, faults.size());
  if (!faults.empty()) std::memcpy(fa.Data(), faults.data(), faults.size() * 4);
  result.Set("faults", fa);
  if (bounded.empty()) {
    result.Set("bounded", env.Null());
  } else {
    Napi::Uint32Array bo = Napi::Uint32Array::New(env, bounded.size());
    std::memcpy(bo.Data(), bounded.data(), bounded.size() * 4);
    result.Set("bounded", bo);
  }
  return result;
}

// Bytes this thread's decoder keeps between tasks (its own rows and live buffers): for the test that
// bounds them.
Napi::Value RetainedBytes(const Napi::CallbackInfo& info) {
  ThreadState& st = *info.Env().GetInstanceData<ThreadState>();
  return Napi::Number::New(info.Env(), static_cast<double>(st.rows.own.size() + st.live.own.size()));
}

// Formats doubles as the live messages do (the differential test checks it against String(v)).
Napi::Value FormatNumber(const Napi::CallbackInfo& info) {
  Out o;
  o.start(nullptr, 0);
  jsNumber(o, info[0].As<Napi::Number>().DoubleValue());
  return Napi::String::New(info.Env(), reinterpret_cast<const char*>(o.b), o.pos);
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  env.SetInstanceData(new ThreadState());  // freed by node-addon-api when the environment ends
  exports.Set("decodeTask", Napi::Function::New(env, DecodeTask));
  exports.Set("formatNumber", Napi::Function::New(env, FormatNumber));
  exports.Set("retainedBytes", Napi::Function::New(env, RetainedBytes));
  RegisterSharedCopy(env, exports);
  RegisterNativeBlock(env, exports);
  RegisterHugeBuffer(env, exports);
  // Bumped with every change of the task protocol or of the exported functions (4: copyBytes;
  // 5: retainedBytes; 6: rowBinaryToNative; 7: its CPU meter, a shared `out`, releasePages;
  // 8: hugePageBuffer, adviseHugePages; 9: decodeTask's string bounds and `bounded`); the JS side
  // refuses a stale build and runs the JS decoder instead.
  exports.Set("abi", Napi::Number::New(env, 9));
  return exports;
}

}  // namespace

NODE_API_MODULE(fleetgw_telemetry, Init)
