// SORT and SORT_RO over lists, sets and sorted sets, as Redis 7.0: BY pattern (a constant
// pattern such as "nosort" skips sorting; "key_*->field" reads a hash field), LIMIT offset count,
// GET pattern (repeatable; "#" is the element itself), ASC/DESC, ALPHA, STORE (SORT only: the
// result replaces the destination as a list; an empty result deletes it).
//
// Where Redis's order depends on its hash tables (a set read with BY nosort, ties between
// elements whose ALPHA weights are equal or missing in a set), rockcache uses member byte order;
// otherwise the order is Redis's: ties keep the input order (a stable sort, as glibc's qsort).
// Pattern keys are read after the sorted key, one MGET per pattern (hash fields one by one).
// Without STORE, a big SORT / SORT_RO runs sliced, on one snapshot (server/slicing/sliced_sort.h);
// what is here is the path of small inputs, of STORE and of EXEC.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/protocol/reply.h"
#include "server/pubsub/notify.h"
#include "server/slicing/sliced_sort.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

// The values `pattern` names for each of `elements`: nullopt where the key is absent or of the
// wrong type (a string, or a hash for "->field"). Plain keys are read with one MGET (one
// snapshot); hash fields one by one. False (and the error appended) when storage fails.
bool LookupAll(CommandContext& ctx, const SortPattern& pattern,
               const std::vector<const std::string*>& elements,
               std::vector<std::optional<std::string>>* values, std::string* out) {
  values->assign(elements.size(), std::nullopt);
  if (pattern.constant || elements.empty()) return true;
  if (pattern.self) {
    for (size_t i = 0; i < elements.size(); ++i) (*values)[i] = *elements[i];
    return true;
  }
  std::vector<std::string> keys;
  keys.reserve(elements.size());
  for (const std::string* e : elements) keys.push_back(pattern.prefix + *e + pattern.suffix);
  if (!pattern.hash_field) {
    auto got = ctx.store->MGet(std::vector<std::string_view>(keys.begin(), keys.end()));
    if (!got.ok()) return AppendStatusError(out, got.status()), false;
    *values = std::move(*got);
    return true;
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    auto got = ctx.store->HGet(keys[i], pattern.field);
    if (got.ok()) {
      (*values)[i] = std::move(*got);
    } else if (!got.status().IsWrongType()) {
      return AppendStatusError(out, got.status()), false;
    }
  }
  return true;
}

// The elements of a list, set or sorted set in their natural order (sets by member bytes).
bool LoadElements(CommandContext& ctx, const std::string& key, storage::KeyType type,
                  std::vector<std::string>* elements, std::string* out) {
  if (type == storage::KeyType::kList) {
    auto items = ctx.store->LRange(key, 0, -1);
    if (!items.ok()) return AppendStatusError(out, items.status()), false;
    *elements = std::move(*items);
  } else if (type == storage::KeyType::kSet) {
    auto items = ctx.store->SMembers(key);
    if (!items.ok()) return AppendStatusError(out, items.status()), false;
    *elements = std::move(*items);
  } else if (type == storage::KeyType::kZSet) {
    auto items = ctx.store->ZRange(key, storage::ZRangeSpec{});
    if (!items.ok()) return AppendStatusError(out, items.status()), false;
    elements->reserve(items->size());
    for (auto& item : *items) elements->push_back(std::move(item.member));
  }
  return true;
}

// Replaces `dst` with a list of `items` (deletes it when empty).
bool StoreList(CommandContext& ctx, const std::string& dst, const std::vector<std::string>& items,
               std::string* out) {
  auto deleted = ctx.store->Del({dst});
  if (!deleted.ok()) return AppendStatusError(out, deleted.status()), false;
  if (items.empty()) return NotifyStore(ctx, kNotifyList, "", dst, *deleted, 0), true;
  // Group commit defers the delete; the push below reads the key and must see it.
  if (Status s = ctx.store->FlushThreadWriteGroup(); !s.ok()) {
    return AppendStatusError(out, s), false;
  }
  std::vector<std::string_view> views(items.begin(), items.end());
  auto pushed = ctx.store->RPush(dst, views);
  if (!pushed.ok()) return AppendStatusError(out, pushed.status()), false;
  NotifyStore(ctx, kNotifyList, "sortstore", dst, *deleted, static_cast<int64_t>(items.size()));
  return true;
}

void SortGeneric(CommandContext& ctx, const Args& argv, bool readonly, std::string* out) {
  bool desc = false, alpha = false, dontsort = false;
  int64_t limit_start = 0, limit_count = -1;
  const std::string* sortby = nullptr;
  const std::string* store_key = nullptr;
  std::vector<SortPattern> gets;
  for (size_t j = 2; j < argv.size(); ++j) {
    size_t left = argv.size() - j - 1;
    const std::string& arg = argv[j];
    if (Is(arg, "ASC")) {
      desc = false;
    } else if (Is(arg, "DESC")) {
      desc = true;
    } else if (Is(arg, "ALPHA")) {
      alpha = true;
    } else if (Is(arg, "LIMIT") && left >= 2) {
      if (!ParseInteger(argv[j + 1], &limit_start) || !ParseInteger(argv[j + 2], &limit_count)) {
        return out->append(kReplyNotInteger), void();
      }
      j += 2;
    } else if (!readonly && Is(arg, "STORE") && left >= 1) {
      store_key = &argv[++j];
    } else if (Is(arg, "BY") && left >= 1) {
      sortby = &argv[++j];
      dontsort = sortby->find('*') == std::string::npos;  // a constant pattern: no sorting
    } else if (Is(arg, "GET") && left >= 1) {
      gets.emplace_back(argv[++j]);
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }

  auto type = ctx.store->Type(argv[1]);
  if (!type.ok()) return AppendStatusError(out, type.status());
  using storage::KeyType;
  if (*type != KeyType::kNone && *type != KeyType::kList && *type != KeyType::kSet &&
      *type != KeyType::kZSet) {
    return out->append(kReplyWrongType), void();
  }
  // A set has no order of its own: stored results are sorted so that they are reproducible.
  if (dontsort && *type == KeyType::kSet && store_key != nullptr) {
    dontsort = false;
    alpha = true;
    sortby = nullptr;
  }
  if (store_key == nullptr && *type != KeyType::kNone) {
    // Without STORE a big sort runs sliced (server/slicing/sliced_sort.h). SORT ... STORE is
    // never sliced: it writes its destination under its key locks, in one go, below.
    SortRequest request;
    request.key = argv[1];
    request.type = *type;
    request.desc = desc;
    request.alpha = alpha;
    request.dontsort = dontsort;
    if (sortby != nullptr && !dontsort) request.by.emplace(*sortby);
    request.limit_start = limit_start;
    request.limit_count = limit_count;
    request.gets = gets;
    if (ReplySort(ctx, request, out)) return;
  }
  std::vector<std::string> elements;
  if (!LoadElements(ctx, argv[1], *type, &elements, out)) return;

  const int64_t len = static_cast<int64_t>(elements.size());
  int64_t start = 0, end = 0;
  SortWindow(len, limit_start, limit_count, &start, &end);

  std::vector<SortItem> items;
  bool ordered = *type == KeyType::kList || *type == KeyType::kZSet;
  if (ordered && dontsort) {
    // Natural order (reversed with DESC), only the LIMIT window.
    for (int64_t i = start; i <= end; ++i) {
      size_t at = static_cast<size_t>(desc ? len - 1 - i : i);
      items.push_back(SortItem{std::move(elements[at]), 0, std::nullopt});
    }
    end -= start;
    start = 0;
  } else {
    items.reserve(elements.size());
    for (auto& e : elements) items.push_back(SortItem{std::move(e), 0, std::nullopt});
  }

  bool conversion_error = false;
  if (!dontsort) {
    std::optional<SortPattern> by;
    if (sortby != nullptr) by.emplace(*sortby);
    std::vector<std::optional<std::string>> weights;
    if (by) {
      std::vector<const std::string*> names;
      names.reserve(items.size());
      for (const auto& item : items) names.push_back(&item.element);
      if (!LookupAll(ctx, *by, names, &weights, out)) return;
    }
    for (size_t i = 0; i < items.size(); ++i) {
      SortItem& item = items[i];
      if (by && !weights[i]) continue;
      if (alpha) {
        if (by) item.weight = std::move(weights[i]);
      } else if (!ParseSortWeight(by ? *weights[i] : item.element, &item.score)) {
        conversion_error = true;
      }
    }
    const bool by_pattern = by.has_value(), binary = store_key != nullptr;
    auto compare = [&](const SortItem& a, const SortItem& b) {
      int cmp = CompareSortItems(a, b, alpha, by_pattern, binary);
      return (desc ? -cmp : cmp) < 0;
    };
    std::stable_sort(items.begin(), items.end(), compare);
  }
  if (conversion_error) {
    return AppendError(out, kSortNotDouble);
  }

  const int64_t window = end - start + 1;
  const int64_t output_len = gets.empty() ? window : static_cast<int64_t>(gets.size()) * window;
  std::vector<const std::string*> window_elements;
  for (int64_t j = start; j <= end; ++j) {
    window_elements.push_back(&items[static_cast<size_t>(j)].element);
  }
  std::vector<std::vector<std::optional<std::string>>> got(gets.size());
  for (size_t g = 0; g < gets.size(); ++g) {
    if (!LookupAll(ctx, gets[g], window_elements, &got[g], out)) return;
  }
  std::vector<std::string> stored;
  if (store_key == nullptr) AppendArrayHeader(out, output_len);
  for (size_t j = 0; j < window_elements.size(); ++j) {
    if (gets.empty()) {
      if (store_key == nullptr) {
        AppendBulk(out, *window_elements[j]);
      } else {
        stored.push_back(*window_elements[j]);
      }
      continue;
    }
    for (size_t g = 0; g < gets.size(); ++g) {
      if (store_key == nullptr) {
        AppendOptionalBulk(out, got[g][j]);
      } else {
        stored.push_back(got[g][j].value_or(""));
      }
    }
  }
  if (store_key == nullptr) return;
  if (!StoreList(ctx, *store_key, stored, out)) return;
  AppendInteger(out, output_len);
}

void Sort(CommandContext& ctx, Args& argv, std::string* out) { SortGeneric(ctx, argv, false, out); }
void SortRo(CommandContext& ctx, Args& argv, std::string* out) {
  SortGeneric(ctx, argv, true, out);
}

// SORT's keys: the sorted key and the STORE destination, if any.
std::vector<std::string_view> SortKeys(const Args& argv) {
  std::vector<std::string_view> keys{argv[1]};
  for (size_t i = 2; i + 1 < argv.size(); ++i) {
    if (Is(argv[i], "STORE")) keys.emplace_back(argv[++i]);
  }
  return keys;
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kSortCommands = {
    {"sort", -2, kWrite, 1, 1, 1, Sort, nullptr, nullptr, SortKeys},
    {"sort_ro", -2, kReadOnly, 1, 1, 1, SortRo},
};
// clang-format on

}  // namespace rockcache::server
