// hugePageBuffer(bytes): an ArrayBuffer over an anonymous mapping of its own, aligned to 2 MiB and
// advised MADV_HUGEPAGE. adviseHugePages(view): the same advice for the 2 MiB-aligned part of any
// buffer's memory (a SharedArrayBuffer, which only V8 can allocate).
//
// Why: on the machines here (Firecracker guests, transparent huge pages in `madvise` mode) the first
// write to a fresh 4 KiB page costs enough CPU that a 4 MiB buffer is expensive before it holds a
// byte; on 2 MiB huge pages a first fill costs an order of magnitude less once the guest has backed
// the memory (figures: bench/micro/page-touch.mjs, bench/notes/telemetry-ingest.md). The gateway's large long-lived buffers (the row arena, the Native insert
// output) are filled at peak rate exactly when a peak starts; with 4 KiB pages that first fill was the
// largest single cost of a peak's first seconds (bench/notes/telemetry-ingest.md, "The row buffers on huge pages"). V8's own ArrayBuffers come
// from calloc, whose mappings are neither aligned nor advised, and Node offers no way to ask.
//
// The memory is zero (a fresh mapping) and is unmapped when V8 collects the ArrayBuffer. When the kernel
// refuses the advice (huge pages off) the buffer is still valid, with 4 KiB pages.
#include "huge_buffer.h"

#include "page_advice.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <new>

namespace {

constexpr size_t kHuge = size_t{2} << 20;

struct Mapping {
  void* base;
  size_t length;
};

void Unmap(napi_env /*env*/, void* /*data*/, void* hint) {
  auto* m = static_cast<Mapping*>(hint);
  munmap(m->base, m->length);
  delete m;
}

Napi::Value HugePageBuffer(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) {
    Napi::TypeError::New(env, "hugePageBuffer(bytes: number)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const double want = info[0].As<Napi::Number>().DoubleValue();
  // 1 GiB: far above any buffer the gateway asks for, and well inside size_t and V8's limits.
  if (!(want >= 1 && want <= double(size_t{1} << 30)) || want != static_cast<double>(static_cast<size_t>(want))) {
    Napi::RangeError::New(env, "hugePageBuffer: bytes must be an integer from 1 to 2^30").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const size_t bytes = static_cast<size_t>(want);
  const size_t length = (bytes + kHuge - 1) & ~(kHuge - 1);
  // Before the mapping: a failed allocation here must not throw past N-API (C++ exceptions are on).
  auto* m = new (std::nothrow) Mapping{nullptr, length};
  if (m == nullptr) {
    Napi::Error::New(env, "hugePageBuffer: out of memory").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  // Map one huge page more than needed, then cut the unaligned head and the tail away.
  void* raw = mmap(nullptr, length + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    delete m;
    Napi::Error::New(env, "hugePageBuffer: out of memory").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHuge - 1) & ~(uintptr_t{kHuge} - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = start + length + kHuge;
  if (end > aligned + length) munmap(reinterpret_cast<void*>(aligned + length), end - (aligned + length));
  void* base = reinterpret_cast<void*>(aligned);
  madvise(base, length, MADV_HUGEPAGE);  // advice only: refused (THP off), the pages are 4 KiB
  m->base = base;
  napi_value ab;
  if (napi_create_external_arraybuffer(env, base, bytes, Unmap, m, &ab) != napi_ok) {
    munmap(base, length);
    delete m;
    Napi::Error::New(env, "hugePageBuffer: this Node does not allow external ArrayBuffers").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  return Napi::Value(env, ab);
}

// For a buffer V8 allocated (calloc: a mapping of its own when large, starting a header past a page
// boundary): the whole 2 MiB blocks inside it, 15 of 16 for 32 MiB, 1 of 2 for 4 MiB. Returns the
// bytes advised (0 when none fit or the kernel refused).
Napi::Value AdviseHugePages(const Napi::CallbackInfo& info) {
  return AdviseWholeBlocks(info, "adviseHugePages(buffer: Uint8Array)", kHuge, MADV_HUGEPAGE);
}

}  // namespace

void RegisterHugeBuffer(Napi::Env env, Napi::Object exports) {
  exports.Set("hugePageBuffer", Napi::Function::New(env, HugePageBuffer));
  exports.Set("adviseHugePages", Napi::Function::New(env, AdviseHugePages));
}
