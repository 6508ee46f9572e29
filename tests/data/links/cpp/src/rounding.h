#pragma once

namespace acme {
long HalfUp(long cents);
}
