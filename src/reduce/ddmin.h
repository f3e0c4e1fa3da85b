// Delta debugging's ddmin (Zeller and Hildebrandt, "Simplifying and Isolating Failure-Inducing
// Input", IEEE TSE 28(2), 2002) over any list of items, with the tests of one round handed over
// as a batch so that the reducer can run them in parallel. Used by the nodes, branches, inputs,
// attributes and initializers strategies. minimal_by_bisection, for monotone tests where several
// items may be needed together, is bisect-optimizers' (api/bisect_optimizers.cpp).
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include "onnxdbg/status.h"

namespace onnxdbg::reduce {

/// Tests subsets in the given order and returns the index of the first that still fails, or -1.
template <class T>
using BatchTest = std::function<Expected<int>(const std::vector<std::vector<T>>&)>;

/// Returns a 1-minimal subset of `items` (order kept) that still fails, given that `items` fails:
/// removing any single item of the result makes the test pass (or the candidate invalid). Each
/// round tests the n chunks, then (n > 2) their complements, doubling n when neither fails.
/// With `try_empty`, the empty subset is tested first (one call ends the search when nothing is
/// needed). Errors: those of `test`.
template <class T>
Expected<std::vector<T>> ddmin(std::vector<T> items, const BatchTest<T>& test,
                               bool try_empty = false) {
  if (try_empty && !items.empty()) {
    ODB_ASSIGN_OR_RETURN(int k, test({std::vector<T>{}}));
    if (k == 0) return std::vector<T>{};
  }
  size_t n = 2;
  while (items.size() >= 2) {
    n = std::min(n, items.size());
    std::vector<std::vector<T>> chunks(n);
    for (size_t i = 0; i < n; ++i) {
      const size_t begin = items.size() * i / n, end = items.size() * (i + 1) / n;
      chunks[i].assign(items.begin() + static_cast<std::ptrdiff_t>(begin),
                       items.begin() + static_cast<std::ptrdiff_t>(end));
    }
    ODB_ASSIGN_OR_RETURN(int k, test(chunks));
    if (k >= 0) {
      items = chunks[static_cast<size_t>(k)];
      n = 2;
      continue;
    }
    if (n > 2) {
      std::vector<std::vector<T>> complements(n);
      for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j)
          if (j != i)
            complements[i].insert(complements[i].end(), chunks[j].begin(), chunks[j].end());
      ODB_ASSIGN_OR_RETURN(k, test(complements));
      if (k >= 0) {
        items = complements[static_cast<size_t>(k)];
        n = std::max<size_t>(n - 1, 2);
        continue;
      }
    }
    if (n >= items.size()) break;
    n = std::min(items.size(), 2 * n);
  }
  return items;
}

/// A fast first phase for ddmin when one contiguous part of `items` is likely enough to fail
/// (one bad node): each round splits the current region into `width + 1` parts and tests the
/// first `width` (one batch: run at once with -j); a failing part becomes the region, and when
/// none fails the last, untested part becomes the region speculatively. Every failing subset the
/// test accepts is verified, so the caller's current set only ever shrinks to verified failures;
/// a speculative region that reaches one item is tested alone. Costs about log_(width+1)(n)
/// rounds of `width` tests, where ddmin spends log2(n) rounds of two; ddmin then runs on the
/// result to make it 1-minimal. Returns the last verified failing subset (`items` if none).
template <class T>
Expected<std::vector<T>> narrow(std::vector<T> items, const BatchTest<T>& test, size_t width) {
  width = std::max<size_t>(1, width);
  std::vector<T> verified = items, region = items;
  bool speculative = false;
  while (region.size() > 1) {
    const size_t parts = std::min(width + 1, region.size());
    std::vector<std::vector<T>> chunks(parts);
    for (size_t i = 0; i < parts; ++i) {
      const size_t begin = region.size() * i / parts, end = region.size() * (i + 1) / parts;
      chunks[i].assign(region.begin() + static_cast<std::ptrdiff_t>(begin),
                       region.begin() + static_cast<std::ptrdiff_t>(end));
    }
    std::vector<std::vector<T>> batch(chunks.begin(), chunks.end() - 1);
    ODB_ASSIGN_OR_RETURN(int k, test(batch));
    if (k >= 0) {
      verified = region = chunks[static_cast<size_t>(k)];
      speculative = false;
    } else {
      region = chunks.back();
      speculative = true;
    }
  }
  if (speculative && region.size() == 1 && region != verified) {
    ODB_ASSIGN_OR_RETURN(int k, test({region}));
    if (k == 0) verified = region;
  }
  return verified;
}

/// A 1-minimal subset of `items` that still fails, for a test that is monotone (every superset
/// of a failing subset fails) and fails on `items` itself: the result is built one item at a
/// time, each found by binary search for the shortest prefix of the items left that, with the
/// items found so far, still fails; its last item is needed, and the next search runs on the
/// items before it (group testing by binary splitting, Hwang, JASA 67(339), 1972). With
/// `empty_fails` false (the caller knows the empty subset passes), k items in the result cost at
/// most k (ceil(log2 N) + 1) tests, fewer than ddmin's complements when several items are
/// needed together. Errors: those of `fails`.
template <class T>
Expected<std::vector<T>> minimal_by_bisection(
    std::vector<T> items, const std::function<Expected<bool>(const std::vector<T>&)>& fails) {
  std::vector<T> found;
  auto with_found = [&](size_t prefix) {
    std::vector<T> s = found;
    s.insert(s.end(), items.begin(), items.begin() + static_cast<std::ptrdiff_t>(prefix));
    return s;
  };
  while (!items.empty()) {
    ODB_ASSIGN_OR_RETURN(bool done, fails(found));
    if (done) break;
    size_t lo = 1, hi = items.size();  // with_found(hi) fails; find the smallest such prefix
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      ODB_ASSIGN_OR_RETURN(bool f, fails(with_found(mid)));
      if (f)
        hi = mid;
      else
        lo = mid + 1;
    }
    found.push_back(items[hi - 1]);
    items.resize(hi - 1);
  }
  return found;
}

}  // namespace onnxdbg::reduce
