// copyBytes(dst: Uint8Array, dstOffset: number, src: Uint8Array): undefined
//
// Why in C++: V8 copies into or out of a SharedArrayBuffer (`TypedArray.prototype.set`) with relaxed
// atomic stores, byte by byte when source and destination are not equally aligned: 1.6 GB/s here,
// against 27 GB/s between ArrayBuffers (bench/micro/shared-copy.mjs). The frame packer copies every
// telemetry message into a shared task slot at an arbitrary offset, and the row arena copies pool
// results out of one: at 400,000 samples/s those copies were 11.7% of the gateway's CPU.
//
// Why a plain memmove is safe: the caller owns the bytes it copies (task-slots.ts: a slot belongs to
// one thread at a time, and is handed over by a message, which orders the memory), so no other thread
// reads or writes them during the copy.
#include "shared_copy.h"
#include "typed_bytes.h"

#include <cmath>
#include <cstring>

namespace {

Napi::Value CopyBytes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint8_t* dst = nullptr;
  uint8_t* src = nullptr;
  size_t dstLen = 0, srcLen = 0;
  if (!uint8Bytes(info[0], dst, dstLen) || !info[1].IsNumber() || !uint8Bytes(info[2], src, srcLen)) {
    Napi::TypeError::New(env, "copyBytes(dst: Uint8Array, dstOffset: number, src: Uint8Array)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  double off = info[1].As<Napi::Number>().DoubleValue();
  if (!(off >= 0) || std::floor(off) != off || off > static_cast<double>(dstLen) || srcLen > dstLen - static_cast<size_t>(off)) {
    Napi::RangeError::New(env, "copyBytes: src does not fit in dst at dstOffset").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  // memmove: src and dst may be views of the same buffer.
  if (srcLen > 0) std::memmove(dst + static_cast<size_t>(off), src, srcLen);
  return env.Undefined();
}

}  // namespace

void RegisterSharedCopy(Napi::Env env, Napi::Object exports) {
  exports.Set("copyBytes", Napi::Function::New(env, CopyBytes));
}
