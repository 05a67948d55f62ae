# Bifröst's Spark Connect client: C++ generated at build time from the Spark Connect protos
# committed under src/bifrost/source/spark_connect/proto (Spark 4.0.4's, as its connect jar
# ships them), with Debian's protoc and grpc_cpp_plugin. Only the source's .cc includes the
# generated headers: gRPC and protobuf stay out of every header.
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_program(GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)

set(SPARK_CONNECT_PROTO_DIR ${CMAKE_SOURCE_DIR}/src/bifrost/source/spark_connect/proto)
set(SPARK_CONNECT_GEN_DIR ${CMAKE_BINARY_DIR}/spark_connect_gen)
file(GLOB SPARK_CONNECT_PROTOS CONFIGURE_DEPENDS ${SPARK_CONNECT_PROTO_DIR}/spark/connect/*.proto)
set(SPARK_CONNECT_GEN_SOURCES)
foreach(proto ${SPARK_CONNECT_PROTOS})
  get_filename_component(name ${proto} NAME_WE)
  set(base ${SPARK_CONNECT_GEN_DIR}/spark/connect/${name})
  set(outputs ${base}.pb.cc ${base}.pb.h)
  set(grpc_args)
  if(name STREQUAL "base")  # the one file that declares the service
    list(APPEND outputs ${base}.grpc.pb.cc ${base}.grpc.pb.h)
    set(grpc_args --grpc_out=${SPARK_CONNECT_GEN_DIR} --plugin=protoc-gen-grpc=${GRPC_CPP_PLUGIN})
  endif()
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${SPARK_CONNECT_GEN_DIR}
    COMMAND protobuf::protoc -I ${SPARK_CONNECT_PROTO_DIR} --cpp_out=${SPARK_CONNECT_GEN_DIR}
            ${grpc_args} ${proto}
    DEPENDS ${proto} ${SPARK_CONNECT_PROTOS}
    COMMENT "protoc: spark/connect/${name}.proto"
    VERBATIM)
  list(FILTER outputs INCLUDE REGEX "\\.cc$")
  list(APPEND SPARK_CONNECT_GEN_SOURCES ${outputs})
endforeach()

add_library(spark_connect_proto STATIC ${SPARK_CONNECT_GEN_SOURCES})
target_include_directories(spark_connect_proto SYSTEM PUBLIC ${SPARK_CONNECT_GEN_DIR})
target_link_libraries(spark_connect_proto PUBLIC protobuf::libprotobuf gRPC::grpc++)
