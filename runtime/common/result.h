#pragma once
// Moved to base/result.h; this forwarder goes once every branch has switched.
#include "base/result.h"
