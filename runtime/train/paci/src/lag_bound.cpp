// lag_bound.h is header-only (constexpr); this file checks the formulas at compile time.
#include "bubblescope/paci/lag_bound.h"

namespace bs::paci {

static_assert(maxLag(8, 0, 8) == 1, "p=8, a=8: at most one crossed update at stage 0");
static_assert(maxLag(8, 7, 8) == 0, "the last stage runs B right after F");
static_assert(maxLag(8, 0, 4) == 2, "a=4 allows two updates at the first stages");
static_assert(maxLag(8, 0, 1) == 7, "async 1F1B without accumulation: p-s-1");
static_assert(maxLag(8, 0, 8, 2) == 2, "k extra in-flight micro-batches add to the window");
static_assert(minAccumForLag(8, 0, 1) == 7, "a >= p-1 keeps the lag at one update");
static_assert(minAccumForLag(8, 0, 2) == 4);
static_assert(minAccumForLag(1, 0, 0) == 1);

} // namespace bs::paci
