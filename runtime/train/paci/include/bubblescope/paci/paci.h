#pragma once
// Umbrella header of the Bubblescope PACI library (find_package(Bubblescope COMPONENTS paci)).
#include "bubblescope/paci/lag_bound.h"
#include "bubblescope/paci/local_accumulator.h"
#include "bubblescope/paci/lr_schedule.h"
