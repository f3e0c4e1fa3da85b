// Einsum (ONNX Einsum-12): numpy-style Einstein summation over any number of inputs. Supports
// repeated labels within one operand (diagonals), "..." (broadcast dims, aligned to the right),
// and the implicit output form (labels seen once, in alphabetical order, after the ellipsis dims).
// Computed directly as a loop over every label combination: clear rather than fast.
#include <algorithm>
#include <map>

#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

// A label is a letter (0..51) or an ellipsis dim (52 + k, k counted from the left of the
// broadcast ellipsis).
constexpr int kEllipsisBase = 52;

struct Term {
  std::vector<int> letters;  // letters in order, with kEllipsisMark where "..." stands
  bool has_ellipsis = false;
};
constexpr int kEllipsisMark = -1;

// Upper case first, so that sorting ids sorts like numpy (by character code).
int letter_id(char c) {
  return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? 26 + c - 'a' : -2;
}

Expected<Term> parse_term(const KernelContext& ctx, const std::string& s) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (s.compare(i, 3, "...") != 0 || t.has_ellipsis)
        return model_error(ctx.describe() + ": bad ellipsis in einsum term '" + s + "'");
      t.has_ellipsis = true;
      t.letters.push_back(kEllipsisMark);
      i += 2;
      continue;
    }
    const int id = letter_id(c);
    if (id < 0)
      return model_error(ctx.describe() + ": einsum term '" + s + "' has the character '" +
                         std::string(1, c) + "'; labels must be letters");
    t.letters.push_back(id);
  }
  return t;
}

// Expands a term over an operand of rank `rank` into one label per dim.
Expected<std::vector<int>> expand_labels(const KernelContext& ctx, const Term& t, int64_t rank,
                                         int64_t ell_rank, const std::string& what) {
  const int64_t named = static_cast<int64_t>(t.letters.size()) - (t.has_ellipsis ? 1 : 0);
  const int64_t here = rank - named;
  if (here < 0 || (!t.has_ellipsis && here != 0))
    return model_error(ctx.describe() + ": " + what + " has rank " + std::to_string(rank) +
                       " but its einsum term names " + std::to_string(named) + " dims");
  std::vector<int> out;
  for (int l : t.letters) {
    if (l != kEllipsisMark) {
      out.push_back(l);
      continue;
    }
    for (int64_t k = 0; k < here; ++k)
      out.push_back(kEllipsisBase + static_cast<int>(ell_rank - here + k));
  }
  return out;
}

template <class T>
Status einsum_typed(KernelContext& ctx, const std::vector<const Tensor*>& ins,
                    const std::vector<std::vector<int>>& in_labels,
                    const std::vector<int>& out_labels, const std::map<int, int64_t>& sizes) {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
  // All labels: output ones first, then the summed ones.
  std::vector<int> loop = out_labels;
  for (const auto& [l, n] : sizes)
    if (std::find(out_labels.begin(), out_labels.end(), l) == out_labels.end()) loop.push_back(l);
  std::map<int, size_t> pos;
  for (size_t i = 0; i < loop.size(); ++i) pos[loop[i]] = i;
  Shape out_shape, loop_shape, sum_shape;
  for (int l : out_labels) out_shape.push_back(sizes.at(l));
  for (int l : loop) loop_shape.push_back(sizes.at(l));
  sum_shape.assign(loop_shape.begin() + static_cast<std::ptrdiff_t>(out_labels.size()),
                   loop_shape.end());
  // Stride of every loop label in every input (0 for labels an input lacks or broadcasts).
  std::vector<std::vector<int64_t>> strides(ins.size(), std::vector<int64_t>(loop.size(), 0));
  for (size_t k = 0; k < ins.size(); ++k) {
    const auto st = strides_of(ins[k]->shape());
    for (size_t d = 0; d < in_labels[k].size(); ++d)
      if (ins[k]->dim(static_cast<int64_t>(d)) != 1) strides[k][pos[in_labels[k][d]]] += st[d];
  }
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, ins[0]->dtype(), out_shape));
  T* po = out.data<T>();
  const size_t no = out_labels.size();
  int64_t oi = 0;
  for_each_index(out_shape, [&](const std::vector<int64_t>& oidx) {
    std::vector<int64_t> base(ins.size(), 0);
    for (size_t k = 0; k < ins.size(); ++k)
      for (size_t d = 0; d < no; ++d) base[k] += oidx[d] * strides[k][d];
    Acc acc = 0;
    auto body = [&](const std::vector<int64_t>& sidx) {
      Acc p = 1;
      for (size_t k = 0; k < ins.size(); ++k) {
        int64_t off = base[k];
        for (size_t d = 0; d < sidx.size(); ++d) off += sidx[d] * strides[k][no + d];
        p = static_cast<Acc>(p * static_cast<Acc>(ins[k]->data<T>()[off]));
      }
      acc = static_cast<Acc>(acc + p);
    };
    if (sum_shape.empty())
      body({});
    else
      for_each_index(sum_shape, body);
    po[oi++] = static_cast<T>(acc);
  });
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

Status einsum(KernelContext& ctx) {
  if (!ctx.has_attr("equation"))
    return model_error(ctx.describe() + " is missing its required attribute 'equation'");
  const std::string eq = ctx.attr_string("equation", "");
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<Term> terms;
  for (size_t b = 0;;) {
    const size_t e = lhs.find(',', b);
    ODB_ASSIGN_OR_RETURN(Term t,
                         parse_term(ctx, lhs.substr(b, e == std::string::npos ? e : e - b)));
    terms.push_back(std::move(t));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  if (terms.size() != ctx.num_inputs())
    return model_error(ctx.describe() + ": equation '" + eq + "' has " +
                       std::to_string(terms.size()) + " operand terms but the node has " +
                       std::to_string(ctx.num_inputs()) + " inputs");
  std::vector<const Tensor*> ins;
  int64_t ell_rank = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    ODB_ASSIGN_OR_RETURN(const Tensor* t, ctx.required_input(k));
    if (t->dtype() != ctx.input(0)->dtype())
      return model_error(ctx.describe() + ": all inputs must have one element type");
    ins.push_back(t);
    const int64_t named =
        static_cast<int64_t>(terms[k].letters.size()) - (terms[k].has_ellipsis ? 1 : 0);
    ell_rank = std::max(ell_rank, t->rank() - named);
  }
  std::vector<std::vector<int>> in_labels;
  std::map<int, int64_t> sizes;
  std::map<int, int> counts;
  for (size_t k = 0; k < ins.size(); ++k) {
    ODB_ASSIGN_OR_RETURN(auto labels, expand_labels(ctx, terms[k], ins[k]->rank(), ell_rank,
                                                    "input " + std::to_string(k)));
    for (size_t d = 0; d < labels.size(); ++d) {
      const int l = labels[d];
      const int64_t n = ins[k]->dim(static_cast<int64_t>(d));
      ++counts[l];
      auto it = sizes.find(l);
      if (it == sizes.end()) {
        sizes[l] = n;
      } else if (it->second != n) {
        if (l >= kEllipsisBase && (n == 1 || it->second == 1)) {
          it->second = std::max(it->second, n);
        } else {
          return model_error(ctx.describe() + ": label of dim " + std::to_string(d) + " of input " +
                             std::to_string(k) + " has size " + std::to_string(n) + " but size " +
                             std::to_string(it->second) + " elsewhere in '" + eq + "'");
        }
      }
    }
    in_labels.push_back(std::move(labels));
  }
  std::vector<int> out_labels;
  if (arrow != std::string::npos) {
    ODB_ASSIGN_OR_RETURN(Term ot, parse_term(ctx, eq.substr(arrow + 2)));
    ODB_ASSIGN_OR_RETURN(
        out_labels,
        expand_labels(ctx, ot,
                      ot.has_ellipsis ? static_cast<int64_t>(ot.letters.size()) - 1 + ell_rank
                                      : static_cast<int64_t>(ot.letters.size()),
                      ell_rank, "the output"));
    for (size_t i = 0; i < out_labels.size(); ++i) {
      if (!sizes.count(out_labels[i]))
        return model_error(ctx.describe() + ": output label in '" + eq + "' appears in no input");
      if (std::count(out_labels.begin(), out_labels.end(), out_labels[i]) > 1)
        return model_error(ctx.describe() + ": output labels in '" + eq + "' repeat");
    }
  } else {
    for (int64_t k = 0; k < ell_rank; ++k)
      out_labels.push_back(kEllipsisBase + static_cast<int>(k));
    for (const auto& [l, c] : counts)
      if (l < kEllipsisBase && c == 1) out_labels.push_back(l);
  }
  return visit_numeric(ins[0]->dtype(), "Einsum", [&](auto tag) {
    return einsum_typed<decltype(tag)>(ctx, ins, in_labels, out_labels, sizes);
  });
}

}  // namespace

void register_einsum(KernelRegistry& r) {
  r.add("Einsum", 12, einsum).accumulates_in_double().through(28);
}

}  // namespace onnxdbg::reference
