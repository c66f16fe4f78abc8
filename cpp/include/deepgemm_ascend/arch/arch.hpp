// All Arch tags.
#pragma once

#include "deepgemm_ascend/arch/ascend910b.hpp"
#include "deepgemm_ascend/arch/ascend950.hpp"
#include "deepgemm_ascend/arch/host.hpp"
