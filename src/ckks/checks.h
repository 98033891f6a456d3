#pragma once
// Argument validation shared by the scheme classes: every check runs before any work, so a failed
// call leaves its inputs untouched.

#include <string>

#include "ckks/rns_util.h"
#include "theo/ckks/context.h"
#include "theo/errors.h"

namespace theo::detail {

template <typename T>
void require_usable(const Context& ctx, const T& obj, const char* what) {
  if (obj.empty()) {
    throw ContextError(std::string(what) +
                       " is empty (default-constructed or moved-from); pass an object created by "
                       "this Context");
  }
  if (obj.context_id() != ctx.id()) {
    throw ContextError(std::string(what) + " belongs to another Context (context id " +
                       std::to_string(obj.context_id()) + ", this Context is " +
                       std::to_string(ctx.id()) + "); objects of two Contexts cannot be mixed");
  }
}

inline bool scales_match(long double a, long double b, double tolerance) {
  if (!(a > 0) || !(b > 0)) return false;
  const long double rel = a / b - 1.0L;
  return (rel < 0 ? -rel : rel) <= static_cast<long double>(tolerance);
}

inline void require_same_scale(const Context& ctx, long double a, long double b, const char* name_a,
                               const char* name_b) {
  if (!scales_match(a, b, ctx.scale_tolerance())) {
    throw ScaleError(std::string("scales differ beyond the relative tolerance ") +
                     scale_string(ctx.scale_tolerance()) + ": " + name_a + " has scale " +
                     scale_string(a) + ", " + name_b + " has scale " + scale_string(b));
  }
}

}  // namespace theo::detail
