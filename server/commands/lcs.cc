// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]: the longest common subsequence of
// two strings, as Redis 7.0's lcsCommand computes and reports it (same table, same backtracking,
// so that ties pick the same subsequence and IDX the same ranges).
//
// Memory: the dynamic-programming table takes (len1 + 1) * (len2 + 1) * 4 bytes; as Redis, a
// table larger than proto-max-bulk-len is refused before anything is allocated. The IDX reply
// holds at most one range per matched byte and is checked against the reply budget.
#include <cstdint>
#include <new>
#include <optional>

#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/commands/reply_budget.h"
#include "server/protocol/reply.h"
#include "server/settings.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

void Lcs(CommandContext& ctx, Args& argv, std::string* out) {
  std::optional<std::string> values[2];
  for (int k = 0; k < 2; ++k) {
    auto got = ctx.store->Get(argv[1 + k]);
    if (!got.ok()) {
      if (got.status().IsWrongType()) {
        return AppendError(out, "ERR The specified keys must contain string values");
      }
      return AppendStatusError(out, got.status());
    }
    values[k] = std::move(*got);
  }
  bool get_len = false, get_idx = false, with_match_len = false;
  int64_t min_match_len = 0;
  for (size_t j = 3; j < argv.size(); ++j) {
    bool more = j + 1 < argv.size();
    if (Is(argv[j], "IDX")) {
      get_idx = true;
    } else if (Is(argv[j], "LEN")) {
      get_len = true;
    } else if (Is(argv[j], "WITHMATCHLEN")) {
      with_match_len = true;
    } else if (Is(argv[j], "MINMATCHLEN") && more) {
      if (!ParseInteger(argv[j + 1], &min_match_len)) {
        return out->append(kReplyNotInteger), void();
      }
      if (min_match_len < 0) min_match_len = 0;
      ++j;
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }
  if (get_idx && get_len) {
    return AppendError(out, "ERR If you want both the length and indexes, please just use IDX.");
  }
  const std::string a = values[0].value_or("");
  const std::string b = values[1].value_or("");
  if (a.size() >= UINT32_MAX - 1 || b.size() >= UINT32_MAX - 1) {
    return AppendError(out, "ERR String too long for LCS");
  }
  const auto alen = static_cast<uint32_t>(a.size());
  const auto blen = static_cast<uint32_t>(b.size());
  const uint64_t cells = (uint64_t{alen} + 1) * (uint64_t{blen} + 1);
  const uint64_t max_bulk = ctx.settings().proto_max_bulk_len.load(std::memory_order_relaxed);
  if (cells * sizeof(uint32_t) > max_bulk) {
    return AppendError(
        out, "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
  }
  std::vector<uint32_t> table;
  try {
    table.resize(cells);
  } catch (const std::bad_alloc&) {
    return AppendError(out, "ERR Insufficient memory, failed allocating transient memory for LCS");
  }
  auto at = [&](uint32_t i, uint32_t j) -> uint32_t& {
    return table[j + uint64_t{i} * (blen + 1)];
  };
  for (uint32_t i = 1; i <= alen; ++i) {
    for (uint32_t j = 1; j <= blen; ++j) {
      if (a[i - 1] == b[j - 1]) {
        at(i, j) = at(i - 1, j - 1) + 1;
      } else {
        at(i, j) = std::max(at(i - 1, j), at(i, j - 1));
      }
    }
  }

  uint32_t idx = at(alen, blen);
  const bool compute = get_idx || !get_len;
  std::string result(compute ? idx : 0, '\0');
  std::string matches;  // the IDX ranges, counted in `ranges`
  int64_t ranges = 0;
  uint32_t a_start = alen, a_end = 0, b_start = 0, b_end = 0;  // a_start == alen: no range
  uint32_t i = alen, j = blen;
  while (compute && i > 0 && j > 0) {
    bool emit = false;
    if (a[i - 1] == b[j - 1]) {
      result[idx - 1] = a[i - 1];
      if (a_start == alen) {
        a_start = a_end = i - 1;
        b_start = b_end = j - 1;
      } else if (a_start == i && b_start == j) {
        --a_start;
        --b_start;
      } else {
        emit = true;
      }
      if (a_start == 0 || b_start == 0) emit = true;
      --idx;
      --i;
      --j;
    } else {
      if (at(i - 1, j) > at(i, j - 1)) {
        --i;
      } else {
        --j;
      }
      if (a_start != alen) emit = true;
    }
    if (emit) {
      uint32_t match_len = a_end - a_start + 1;
      if (get_idx && (min_match_len == 0 || match_len >= min_match_len)) {
        AppendArrayHeader(&matches, with_match_len ? 3 : 2);
        AppendArrayHeader(&matches, 2);
        AppendInteger(&matches, a_start);
        AppendInteger(&matches, a_end);
        AppendArrayHeader(&matches, 2);
        AppendInteger(&matches, b_start);
        AppendInteger(&matches, b_end);
        if (with_match_len) AppendInteger(&matches, match_len);
        ++ranges;
        if (ReplyOverBudget(ctx, *out, matches.size())) return;
      }
      a_start = alen;
    }
  }
  if (get_idx) {
    AppendMapHeader(out, 2);
    AppendBulk(out, "matches");
    AppendArrayHeader(out, ranges);
    out->append(matches);
    AppendBulk(out, "len");
    AppendInteger(out, at(alen, blen));
  } else if (get_len) {
    AppendInteger(out, at(alen, blen));
  } else {
    AppendBulk(out, result);
  }
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kLcsCommands = {
    {"lcs", -3, kReadOnly, 1, 2, 1, Lcs},
};
// clang-format on

}  // namespace rockcache::server
