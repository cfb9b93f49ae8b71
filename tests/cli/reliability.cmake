# Issue 33: outputs never replace what is not a regular file; every size from input is bounded
# before it is allocated; every refusal exits 2 naming the field.
add_test(NAME cli_outputs_refuse_special_files
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/special_outputs.sh $<TARGET_FILE:bubblescope-cli>
            ${PROJECT_SOURCE_DIR}/tests/data/kineto/1f1b-2 ${CMAKE_CURRENT_BINARY_DIR}/special_outputs)
set_tests_properties(cli_outputs_refuse_special_files PROPERTIES LABELS cli TIMEOUT 300
    PASS_REGULAR_EXPRESSION "ok: 4 writers" FAIL_REGULAR_EXPRESSION "FAIL")

# Profiles of several steps: each step on its own, their median, the what-ifs from the median step.
set(_kineto ${PROJECT_SOURCE_DIR}/tests/data/kineto)
bs_cli_test(analyze_three_steps 0 ARGS analyze ${_kineto}/1f1b-3
    STDOUT "3 profiled steps, each analysed on its own.*ProfilerStep#2 +6 .*ProfilerStep#3 +6 .*ProfilerStep#4 +6 .*median.*below: ProfilerStep#[234], the median step time; the what-ifs calibrate from it.*Schedule1F1B job.*m = 6")
bs_cli_test(analyze_three_steps_json 0 ARGS analyze ${_kineto}/interleaved-3 --json
    STDOUT "\"median\": {.*\"profiler_step\": [234],.*\"profiler_steps\": \\[.*\"microbatches\": 6")
# Numbers in labels and ranks.
foreach(_m 1e3 8:8 0 70000)
    string(REPLACE ":" "_" _name ${_m})
    bs_cli_test(what_if_m_${_name} 2 ARGS analyze ${_kineto}/1f1b-2 --what-if gpipe:${_m}
        STDERR "--what-if gpipe:${_m}: micro-batches after ':' must be an integer.*allowed: SCHEDULE or SCHEDULE:M with M in 1..65536")
endforeach()

# Exit codes: 2 for bad input or refused, with the reason.
bs_cli_test(csv_deadlock 2 ARGS simulate --schedule-csv ${PROJECT_SOURCE_DIR}/tests/data/schedules/deadlock_crossed_p2_m2.csv -m 2
    -p 2 STDERR "deadlock: stage 0 waits forever.*schedule CSV '.*deadlock_crossed_p2_m2.csv'")
bs_cli_test(export_pytorch_csv_of_paci 2 ARGS export --format pytorch-csv STDERR "pytorch-csv cannot express 'paci'")
bs_cli_test(model_with_cost 2 ARGS simulate --model tiny --cost 5,5,5
    STDERR "--cost does not apply with --model: the model and --device-profile give the costs")
bs_cli_test(model_with_comm 2 ARGS simulate --model tiny --comm 1 STDERR "--comm does not apply with --model")
bs_cli_test(device_profile_without_model 2 ARGS simulate --device-profile foo
    STDERR "--device-profile does not apply without --model")
# A CSV without --schedule is its own schedule (PyTorch's GPipe CSV once failed against 1f1b's bounds).
set(_schedules ${PROJECT_SOURCE_DIR}/tests/data/schedules)
bs_cli_test(csv_gpipe_without_schedule 0 ARGS simulate --schedule-csv ${_schedules}/gpipe_p4_m8.csv -p 4
    STDOUT "gpipe_p4_m8.csv.*bubble 27.27 %")
bs_cli_test(csv_dualpipev_without_schedule 0 ARGS simulate --schedule-csv ${_schedules}/dualpipev_p4_m8.csv -p 4
    STDOUT "^dualpipev_p4_m8.csv: 4 ranks holding 8 stages.*bubble 11.11 %")
bs_cli_test(csv_gpipe_as_1f1b_hints 2 ARGS simulate --schedule 1f1b --schedule-csv ${_schedules}/gpipe_p4_m8.csv
    STDERR "bound is .*name the schedule it holds, or leave --schedule out")
