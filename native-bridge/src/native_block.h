// rowBinaryToNative: an insert block's RowBinary rows as one ClickHouse Native block, off the event loop (native_block.cc).
#pragma once
#include <napi.h>

void RegisterNativeBlock(Napi::Env env, Napi::Object exports);
