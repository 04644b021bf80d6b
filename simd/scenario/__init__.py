from simd.scenario.schema import *  # noqa: F401,F403
