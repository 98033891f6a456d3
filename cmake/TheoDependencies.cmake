find_package(Threads REQUIRED)
find_package(GMP REQUIRED)
find_package(sodium REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
