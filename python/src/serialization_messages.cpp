// theodosian._core: library messages in Python terms (serialization_support.h). The library names
// its C++ calls (load_relin_key, KeyGenerator::create_galois_keys(...)); a Python caller reads the
// calls it made (RelinKey.from_bytes, keygen.galois_keys(...)).

#include <regex>
#include <string>
#include <vector>

#include "serialization_support.h"

namespace theopy {
namespace {

// ---- error messages ----------------------------------------------------------------------------

// C++ API names in library messages -> the Python calls that do the same.
std::string python_message(std::string m) {
  struct Rule {
    std::regex re;
    const char* to;
  };
  static const std::vector<Rule> rules = [] {
    std::vector<Rule> r;
    const auto add = [&r](const char* re, const char* to) { r.push_back({std::regex(re), to}); };
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
    add(R"(^load_parameters:)", "Parameters.from_bytes / Parameters.load:");
    add(R"(^load_secret_key:)", "SecretKey.from_bytes / SecretKey.load:");
    add(R"(^load_public_key:)", "PublicKey.from_bytes / PublicKey.load:");
    add(R"(^load_relin_key:)", "RelinKey.from_bytes / RelinKey.load:");
    add(R"(^load_galois_keys:)", "GaloisKeys.from_bytes / GaloisKeys.load:");
    add(R"(^load_bootstrapping_keys:)", "BootstrappingKeys.from_bytes / BootstrappingKeys.load:");
    add(R"(^load_evaluation_keys:)", "EvaluationKeys.from_bytes / EvaluationKeys.load:");
    add(R"(^load_plaintext:)", "Plaintext.from_bytes / Plaintext.load:");
    add(R"(^load_ciphertext:)", "Ciphertext.from_bytes / Ciphertext.load:");
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
  nb::module_ errors = nb::module_::import_("theodosian._errors");
  static const char* kNames[] = {"Error",        "ParameterError",   "SecurityError",
                                 "LevelError",   "ScaleError",       "MissingKeyError",
                                 "ContextError", "OutOfMemoryError", "BackendError"};
  // Never released: the translator may run until interpreter shutdown.
  static PyObject* cls[9];
  for (int i = 0; i < 9; ++i)
    cls[i] = errors.attr(kNames[i]).inc_ref().ptr();
  // Registered after bindings.h's translator, so nanobind tries this one first: same classes,
  // messages in Python terms.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    const auto set = [](int i, const std::exception& e) {
      PyErr_SetString(cls[i], python_message(e.what()).c_str());
    };
    try {
      std::rethrow_exception(p);
    } catch (const theo::SecurityError& e) {
      set(2, e);
    } catch (const theo::ParameterError& e) {
      set(1, e);
    } catch (const theo::LevelError& e) {
      set(3, e);
    } catch (const theo::ScaleError& e) {
      set(4, e);
    } catch (const theo::MissingKeyError& e) {
      set(5, e);
    } catch (const theo::ContextError& e) {
      set(6, e);
    } catch (const theo::OutOfMemoryError& e) {
      set(7, e);
    } catch (const theo::BackendError& e) {
      set(8, e);
    } catch (const theo::Error& e) {
      set(0, e);
    }
  });
}

}  // namespace theopy
