#pragma once
#include "runtime/train/model/pipeline_model.h"
