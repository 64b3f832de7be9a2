#pragma once

#define LLMROOF_VERSION_MAJOR 0
#define LLMROOF_VERSION_MINOR 1
#define LLMROOF_VERSION_PATCH 0

namespace llmroof {
inline constexpr const char* version = "0.1.0";
}
