// libFuzzer target for DUMP payload bodies (`make fuzz`): the decoder (server/rdb/value_codec.h)
// must refuse or decode any bytes without reading past them (ASan) and within its memory
// budget; whatever it decodes must encode to a payload that decodes to the same value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "server/rdb/value_codec.h"

using namespace rockcache::server::rdb;  // NOLINT: a fuzz target's one namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  rockcache::storage::KeyValue value;
  if (!DecodeObject(body, &value)) return 0;
  const std::string payload = DumpPayload(value, EncodingLimits());
  std::string_view again;
  if (!CheckFooter(payload, &again)) std::abort();
  rockcache::storage::KeyValue back;
  if (!DecodeObject(again, &back)) std::abort();
  if (back.type != value.type || back.string != value.string ||
      back.pairs.size() != value.pairs.size() || back.members.size() != value.members.size() ||
      back.entries.size() != value.entries.size() ||
      back.elements.size() != value.elements.size()) {
    std::abort();
  }
  return 0;
}
