// theodosian._core: nanobind bindings of the CKKS API (include/theo/theodosian.h). Each topic is
// bound in its own file by one bind_* function (declared in bindings.h); a new topic is one file,
// one declaration and one line below. The order is the order Python sees the types in.

#include "bindings.h"

using namespace theopy;

NB_MODULE(_core, m) {
  m.doc() =
      "Compiled core of theodosian (CKKS homomorphic encryption). Import `theodosian` instead.";
  m.attr("__version__") = THEO_VERSION;
  register_exceptions(m);

  bind_context(m);        // context_bindings.cpp: module functions, Parameters, Context
  bind_values(m);         // ciphertext_bindings.cpp: Plaintext, Ciphertext
  bind_keys(m);           // keys_bindings.cpp: the keys, KeyGenerator
  bind_encoding(m);       // encoding_bindings.cpp: Encoder, Encryptor, Decryptor
  bind_evaluator(m);      // evaluator_bindings.cpp: Evaluator
  bind_circuits(m);       // circuits_bindings.cpp: polynomials, linear transforms, bootstrapping
  bind_workloads(m);      // workloads_bindings.cpp: HELR training
  bind_serialization(m);  // serialization_bindings.cpp: to_bytes / from_bytes / pickling
  bind_activations(m);    // activation_bindings.cpp: composite minimax sign, AppReLU
  bind_cnn(m);            // cnn_bindings.cpp: CNN layers, ResNet inference
}
