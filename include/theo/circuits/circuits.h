#pragma once
// Umbrella header of the circuits layer.

#include "theo/circuits/activation_fit.h"
#include "theo/circuits/bootstrapper.h"
#include "theo/circuits/chebyshev.h"
#include "theo/circuits/cnn.h"
#include "theo/circuits/composite_sign.h"
#include "theo/circuits/dft.h"
#include "theo/circuits/level_planner.h"
#include "theo/circuits/linear_transform.h"
#include "theo/circuits/masked_polynomial.h"
#include "theo/circuits/mod1.h"
#include "theo/circuits/packed_matmul.h"
#include "theo/circuits/polynomial.h"
#include "theo/circuits/rotate_sum.h"
