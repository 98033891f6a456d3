#pragma once
// Umbrella header: the whole public CKKS API.

#include "theo/ckks/ciphertext.h"
#include "theo/ckks/context.h"
#include "theo/ckks/encoder.h"
#include "theo/ckks/encryptor.h"
#include "theo/ckks/evaluator.h"
#include "theo/ckks/evaluator_batch.h"
#include "theo/ckks/graph.h"
#include "theo/ckks/key_generator.h"
#include "theo/ckks/key_switcher.h"
#include "theo/ckks/keys.h"
#include "theo/ckks/serialization.h"
#include "theo/errors.h"
#include "theo/math/params.h"
#include "theo/math/prng.h"
#include "theo/math/security.h"
#include "theo/plan/optimizations.h"
