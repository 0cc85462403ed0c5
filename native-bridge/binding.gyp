{
  "targets": [
    {
      "target_name": "fleetgw_telemetry",
      "sources": ["src/telemetry_decoder.cc", "src/shared_copy.cc", "src/native_block.cc", "src/huge_buffer.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17", "-std=gnu++14"],
      "cflags_cc": ["-std=c++17", "-O3", "-fexceptions", "-Wall", "-Wextra", "-Wno-unused-parameter"]
    }
  ]
}
