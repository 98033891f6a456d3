#include "theo/ring/op_scope.h"

namespace theo {

namespace {
thread_local std::string t_scope;
}  // namespace

void OpScope::push(std::string_view name) {
  restore_size_ = t_scope.size();
  if (!t_scope.empty()) t_scope += '/';
  t_scope += name;
  pushed_ = true;
}

void OpScope::pop() {
  t_scope.resize(restore_size_);
}

const std::string& current_op_scope() {
  return t_scope;
}

}  // namespace theo
