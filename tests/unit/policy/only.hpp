// Picks the actions of one kind out of what a policy engine returned.
#pragma once

#include <variant>
#include <vector>

template <class T, class... Kinds>
std::vector<T> only(const std::vector<std::variant<Kinds...>>& actions) {
  std::vector<T> out;
  for (const auto& a : actions)
    if (auto* x = std::get_if<T>(&a)) out.push_back(*x);
  return out;
}
