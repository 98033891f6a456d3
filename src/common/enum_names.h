#pragma once
// Names of enum values: each enum has one table of {value, name} and these lookups serve every
// direction, so a name is written once and naming and parsing cannot disagree.

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <optional>
#include <string_view>

namespace theo {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

// The name of `value` in `names`; nullptr when the table has no entry for it.
template <typename E, std::size_t N>
constexpr const char* find_enum_name(const EnumName<E> (&names)[N], E value) {
  for (const EnumName<E>& n : names)
    if (n.value == value) return n.name;
  return nullptr;
}

// The name of `value` in `names`, or `unknown` for a value outside the table.
template <typename E, std::size_t N>
constexpr const char* enum_name(const EnumName<E> (&names)[N], E value, const char* unknown) {
  const char* name = find_enum_name(names, value);
  return name != nullptr ? name : unknown;
}

// The value whose name is `name`, ASCII case ignored; nullopt when none is.
template <typename E, std::size_t N>
std::optional<E> enum_from_name(const EnumName<E> (&names)[N], std::string_view name) {
  const auto lower = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
  for (const EnumName<E>& n : names) {
    const std::string_view candidate(n.name);
    if (candidate.size() == name.size() &&
        std::equal(candidate.begin(), candidate.end(), name.begin(),
                   [&](char a, char b) { return lower(a) == lower(b); }))
      return n.value;
  }
  return std::nullopt;
}

}  // namespace theo
