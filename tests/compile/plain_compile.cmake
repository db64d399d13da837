# Compile and run hello.cpp with the single header and no build system flags beyond the standard.
execute_process(COMMAND ${CXX} -std=c++17 -I ${INC} ${SRC} -o ${OUT} -pthread RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "plain compile of the single header failed")
endif()
execute_process(COMMAND ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "hello built from the single header failed: ${rc}")
endif()
