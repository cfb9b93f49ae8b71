# `simulate --calibrate` predicts what `tune --calibrate` ranks: the same calibration, the same
# steady throughput for tune's top row (cmake -P, EXE and DATA given).
set(common --model tiny --device-profile cpu -p 2 --calibrate ${DATA} --calibrate-micro-batch-size 16)
execute_process(COMMAND ${EXE} tune --schedule 1f1b ${common} --accum-values 8 --micro-batch-sizes 16 --json
    OUTPUT_VARIABLE tuned RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "tune failed (${rc}): ${tuned}")
endif()
string(JSON a GET "${tuned}" top 0 accum)
string(JSON b GET "${tuned}" top 0 micro_batch_size)
string(JSON expected GET "${tuned}" top 0 throughput_samples_per_s)
execute_process(COMMAND ${EXE} simulate --schedule 1f1b ${common} -m ${a} -b ${b} --json
    OUTPUT_VARIABLE simulated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "simulate failed (${rc}): ${simulated}")
endif()
string(JSON got GET "${simulated}" steady_throughput_samples_per_s)
string(JSON calibrated GET "${simulated}" calibration)
# CMake compares no floats: the first 7 characters (6 significant digits) must agree
string(SUBSTRING "${expected}" 0 7 e7)
string(SUBSTRING "${got}" 0 7 g7)
if(NOT e7 STREQUAL g7)
    message(FATAL_ERROR "simulate --calibrate: ${got} samples/s; tune --calibrate's top row (a=${a} b=${b}): ${expected}")
endif()
if(NOT calibrated MATCHES "calibrated from")
    message(FATAL_ERROR "simulate --calibrate does not say its calibration: ${calibrated}")
endif()
message(STATUS "agree: ${got} samples/s (${calibrated})")
