#pragma once
#include "tests/support/eventually.h"

namespace cn::reliability {

using ::cn::testing::eventually;

}  // namespace cn::reliability
