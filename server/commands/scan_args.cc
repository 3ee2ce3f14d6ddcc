#include "server/commands/scan_args.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "server/commands/args.h"
#include "server/protocol/reply.h"
#include "server/slicing/sliced_scan.h"

namespace rockcache::server {

bool ParseScanCursor(const std::string& arg, uint64_t* cursor) {
  if (!arg.empty() && std::isspace(static_cast<unsigned char>(arg[0]))) return false;
  char* end = nullptr;
  errno = 0;
  *cursor = std::strtoull(arg.c_str(), &end, 10);
  return *end == '\0' && errno != ERANGE;
}

bool ParseScanOptions(const Args& argv, size_t first, std::string* pattern, uint64_t* count,
                      std::string* out) {
  *pattern = "*";
  *count = 10;
  for (size_t i = first; i < argv.size(); i += 2) {
    if (i + 1 >= argv.size()) return out->append(kReplySyntaxError), false;
    if (Is(argv[i], "COUNT")) {
      int64_t n = 0;
      if (!ParseInteger(argv[i + 1], &n)) return out->append(kReplyNotInteger), false;
      if (n < 1) return out->append(kReplySyntaxError), false;
      *count = static_cast<uint64_t>(n);
    } else if (Is(argv[i], "MATCH")) {
      *pattern = argv[i + 1];
    } else {
      return out->append(kReplySyntaxError), false;
    }
  }
  return true;
}

bool ParseCollectionScan(CommandContext& ctx, const Args& argv, storage::KeyType expected,
                         uint64_t* cursor, std::string* pattern, uint64_t* count,
                         std::string* out) {
  if (!ParseScanCursor(argv[2], cursor)) {
    AppendError(out, "ERR invalid cursor");
    return false;
  }
  std::string error;
  if (ParseScanOptions(argv, 3, pattern, count, &error)) return true;
  auto type = ctx.store->Type(argv[1]);
  if (!type.ok()) {
    AppendStatusError(out, type.status());
    return false;
  }
  if (*type == expected) {
    out->append(error);
    return false;
  }
  *pattern = "*";
  return true;
}

void CollectionScan(CommandContext& ctx, Args& argv, std::string* out) {
  ScanRequest request;
  storage::KeyType type = storage::KeyType::kHash;
  if (Is(argv[0], "HSCAN")) {
    request.target = ScanTarget::kHash;
  } else if (Is(argv[0], "SSCAN")) {
    request.target = ScanTarget::kSet;
    type = storage::KeyType::kSet;
  } else {
    request.target = ScanTarget::kZSet;
    type = storage::KeyType::kZSet;
  }
  uint64_t cursor = 0, count = 0;
  std::string pattern;
  if (!ParseCollectionScan(ctx, argv, type, &cursor, &pattern, &count, out)) return;
  request.key = argv[1];
  request.cursor = cursor;
  request.pattern = pattern;  // "" (MATCH "") replies the item named "" only
  request.count = count;
  ReplyScan(ctx, request, out);
}

}  // namespace rockcache::server
