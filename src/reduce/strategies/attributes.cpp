// Strategy attributes: reset optional attributes (those the op's schema does not require) to
// their defaults by removing them, keeping only those the failure needs.
#include "reduce/strategies/strategies.h"

namespace onnxdbg::reduce {

Status strategy_attributes(Reducer& r) {
  const auto& g = r.original().model.graph();
  std::vector<std::pair<int, std::string>> items;
  for (int i : r.current().nodes)
    for (const auto& a : optional_attributes(r.original().model, g.node(i)))
      if (!r.current().removed_attributes.count({i, a})) items.emplace_back(i, a);
  if (items.empty()) return Status::ok();
  using Item = std::pair<int, std::string>;
  return ddmin_edits<Item>(
      r, items, [](Candidate& c, const Item& item) { c.removed_attributes.insert(item); },
      /*try_empty=*/true);
}

}  // namespace onnxdbg::reduce
