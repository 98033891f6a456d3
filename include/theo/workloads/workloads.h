#pragma once
// Umbrella header of the workloads layer.

#include "theo/workloads/digits.h"
#include "theo/workloads/helr.h"
#include "theo/workloads/resnet.h"
