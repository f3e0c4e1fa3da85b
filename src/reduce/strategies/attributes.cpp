// Strategy attributes: reset optional attributes (those the op's schema does not require) to
// their defaults by removing them, keeping only those the failure needs.
#include "reduce/ddmin.h"
#include "reduce/reducer.h"
#include "reduce/strategies/strategies.h"

namespace onnxdbg::reduce {

Status strategy_attributes(Reducer& r) {
  const auto& g = r.original().model.graph();
  std::vector<std::pair<int, std::string>> items;
  for (int i : r.current().nodes)
    for (const auto& a : optional_attributes(r.original().model, g.node(i)))
      if (!r.current().removed_attributes.count({i, a})) items.emplace_back(i, a);
  if (items.empty()) return Status::ok();
  std::vector<int> ids(items.size());
  for (size_t k = 0; k < ids.size(); ++k) ids[k] = static_cast<int>(k);
  BatchTest<int> test = [&](const std::vector<std::vector<int>>& subsets) -> Expected<int> {
    std::vector<Candidate> batch;
    for (const auto& keep : subsets) {
      Candidate c = r.current();
      for (int k : ids)
        if (std::find(keep.begin(), keep.end(), k) == keep.end())
          c.removed_attributes.insert(items[static_cast<size_t>(k)]);
      batch.push_back(std::move(c));
    }
    return r.try_batch(batch);
  };
  auto kept = ddmin<int>(ids, test, /*try_empty=*/true);
  return kept ? Status::ok() : kept.status();
}

}  // namespace onnxdbg::reduce
