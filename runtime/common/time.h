#pragma once
// Moved to base/time.h; this forwarder goes once every branch has switched.
#include "base/time.h"
