// swift-tools-version: 6.0
// libFuzzer targets for Darkroom's parsers, built only by Scripts/fuzz.sh (with
// -sanitize=fuzzer,address -parse-as-library): a package of its own, so that the main
// package builds and tests without them.
import PackageDescription

let package = Package(
  name: "DarkroomFuzz",
  // Scripts/fuzz.sh links .deps/darkroom to the repository, whatever its folder is called.
  dependencies: [.package(path: ".deps/darkroom")],
  targets: [
    .target(name: "CFuzzDriver"),
    .executableTarget(
      name: "FuzzGraph",
      dependencies: ["CFuzzDriver", .product(name: "Darkroom", package: "darkroom")]),
    .executableTarget(
      name: "FuzzMetadata",
      dependencies: ["CFuzzDriver", .product(name: "Darkroom", package: "darkroom")]),
  ],
  swiftLanguageModes: [.v6]
)
