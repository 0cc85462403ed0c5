// The bytes of a Uint8Array (or Buffer), shared by the addon's entry points (shared_copy.cc,
// native_block.cc).
#pragma once
#include <napi.h>

#include <cstddef>
#include <cstdint>

// The bytes of a Uint8Array. napi_get_arraybuffer_info refuses a SharedArrayBuffer, so the pointer
// comes from the view, already offset by its byteOffset. With `allowShared` false a view of a
// SharedArrayBuffer is refused (a caller that reads the bytes twice and trusts the first read).
// False when `v` is anything else.
inline bool uint8Bytes(const Napi::Value& v, uint8_t*& data, size_t& len, bool allowShared = true) {
  napi_typedarray_type type;
  void* p = nullptr;
  napi_value buffer;
  bool plain = false;
  len = 0;
  if (!v.IsTypedArray() || napi_get_typedarray_info(v.Env(), v, &type, &len, &p, &buffer, nullptr) != napi_ok) return false;
  if (type != napi_uint8_array) return false;
  if (!allowShared && (napi_is_arraybuffer(v.Env(), buffer, &plain) != napi_ok || !plain)) return false;
  data = static_cast<uint8_t*>(p);
  return true;
}
