// hugePageBuffer: large long-lived buffers backed by transparent huge pages (huge_buffer.cc).
#pragma once
#include <napi.h>

void RegisterHugeBuffer(Napi::Env env, Napi::Object exports);
