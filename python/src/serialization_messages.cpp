// theodosian._core: library messages in Python terms (serialization_support.h). The library names
// its C++ calls (load_relin_key, KeyGenerator::create_galois_keys(...)); a Python caller reads the
// calls it made (RelinKey.from_bytes, keygen.galois_keys(...)).

#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "serialization_support.h"

namespace theopy {
namespace {

// ---- error messages ----------------------------------------------------------------------------

// C++ API names in library messages -> the Python calls that do the same.
std::string python_message(const char* what) {
  std::string m = what;
  struct Rule {
    std::regex re;
    std::string to;
  };
  static const std::vector<Rule> rules = [] {
    std::vector<Rule> r;
    const auto add = [&r](const std::string& re, std::string to) {
      r.push_back({std::regex(re), std::move(to)});
    };
    add(R"(KeyGenerator::create_galois_keys\(sk, \{\}, /\*with_conjugation=\*/true\) or KeyGenerator::create_conjugation_key\(sk\))",
        "keygen.galois_keys(sk, conjugation=True), or add it to existing keys with "
        "keygen.add_galois_keys(sk, keys, conjugation=True)");
    add(R"(KeyGenerator::create_galois_keys\(sk, \{(-?[0-9]+)\}\))",
        "keygen.galois_keys(sk, [$1]), or add it to existing keys with "
        "keygen.add_galois_keys(sk, keys, rotations=[$1])");
    add(R"(KeyGenerator::add_galois_keys\(sk, \{([0-9]+)\}, keys\))",
        "keygen.add_galois_keys(sk, keys, galois_elements=[$1])");
    add(R"(\(LoadOptions::max_bytes / max_bytes=\))", "(max_bytes=)");
    add(R"(load_parameter_file / Parameters\.from_file)", "Parameters.from_file / Parameters.load");
    // load_<type>: -> <Class>.from_bytes / <Class>.load:
    const std::pair<const char*, const char*> loaders[] = {
        {"parameters", "Parameters"},          {"secret_key", "SecretKey"},
        {"public_key", "PublicKey"},           {"relin_key", "RelinKey"},
        {"galois_keys", "GaloisKeys"},         {"bootstrapping_keys", "BootstrappingKeys"},
        {"evaluation_keys", "EvaluationKeys"}, {"plaintext", "Plaintext"},
        {"ciphertext", "Ciphertext"}};
    for (const auto& [type, cls] : loaders)
      add("^load_" + std::string(type) + ":", std::string(cls) + ".from_bytes / " + cls + ".load:");
    add(R"(^save: )", "save / to_bytes: ");
    add(R"(\bcreate_(public_key|relin_key|galois_keys|secret_key): )", "KeyGenerator.$1: ");
    add(R"(\b(Encoder|Evaluator|Encryptor|Decryptor|Bootstrapper|KeyGenerator|LinearTransform|PolynomialEvaluator|EvalMod|Context)::([a-z_]+))",
        "$1.$2");
    return r;
  }();
  for (const Rule& rule : rules)
    m = std::regex_replace(m, rule.re, rule.to);
  return m;
}

}  // namespace

void register_message_translator() {
  // Registered after bindings.h's translator, so nanobind tries this one first: same classes,
  // messages in Python terms.
  register_error_translator<python_message>();
}

}  // namespace theopy
