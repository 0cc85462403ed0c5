// copyBytes: memmove between Uint8Arrays, for copies into and out of shared memory (shared_copy.cc).
#pragma once
#include <napi.h>

void RegisterSharedCopy(Napi::Env env, Napi::Object exports);
