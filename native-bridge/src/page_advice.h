// madvise over the whole aligned blocks inside a Uint8Array's memory: releasePages (native_block.cc)
// and adviseHugePages (huge_buffer.cc) differ only in the block size and the advice.
#pragma once
#include <napi.h>
#include <sys/mman.h>

#include <cstdint>

#include "typed_bytes.h"

// The JS entry point: info[0] must be a Uint8Array (else a TypeError with `usage`). Advises the whole
// `align`-sized blocks inside it and returns the bytes advised (0 when none fit or madvise refused).
inline Napi::Value AdviseWholeBlocks(const Napi::CallbackInfo& info, const char* usage, uintptr_t align, int advice) {
  Napi::Env env = info.Env();
  uint8_t* p = nullptr;
  size_t n = 0;
  if (info.Length() < 1 || !uint8Bytes(info[0], p, n)) {
    Napi::TypeError::New(env, usage).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const uintptr_t start = (reinterpret_cast<uintptr_t>(p) + align - 1) & ~(align - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) & ~(align - 1);
  double advised = 0;
  if (end > start && madvise(reinterpret_cast<void*>(start), end - start, advice) == 0) advised = static_cast<double>(end - start);
  return Napi::Number::New(env, advised);
}
