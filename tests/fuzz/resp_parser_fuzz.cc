// libFuzzer target for the RESP parser (`make fuzz`). Splits the input at a point chosen by the
// first byte and feeds both parts, checking the parser's contract: consumed never exceeds the
// input, commands are never empty, and parsing the same bytes in one piece or in two gives the
// same commands (as long as no error occurred).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "server/protocol/resp_parser.h"

using rockcache::server::RespParser;

namespace {

std::vector<std::vector<std::string>> ParseAll(const std::string& input, size_t cut, bool* error) {
  RespParser parser(64 * 1024);
  std::vector<std::vector<std::string>> out;
  std::string buffer;
  *error = false;
  for (int piece = 0; piece < 2; ++piece) {
    buffer += piece == 0 ? input.substr(0, cut) : input.substr(cut);
    while (!buffer.empty()) {
      size_t consumed = 0;
      std::vector<std::string> args;
      auto result = parser.Parse(buffer.data(), buffer.size(), &consumed, &args);
      if (consumed > buffer.size()) std::abort();
      buffer.erase(0, consumed);
      if (result == RespParser::Result::kError) {
        *error = true;
        return out;
      }
      if (result == RespParser::Result::kNeedMore) break;
      if (args.empty()) std::abort();
      out.push_back(std::move(args));
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);
  size_t cut = input.empty() ? 0 : data[0] % (input.size() + 1);
  bool error_whole = false, error_split = false;
  auto whole = ParseAll(input, input.size(), &error_whole);
  auto split = ParseAll(input, cut, &error_split);
  if (!error_whole && !error_split && whole != split) std::abort();
  return 0;
}
