#include "rounding.h"

namespace acme {

long HalfUp(long cents) { return (cents + 50) / 100 * 100; }

}  // namespace acme
