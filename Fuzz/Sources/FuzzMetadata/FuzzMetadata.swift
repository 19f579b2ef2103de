// Metadata from arbitrary bytes (Darkroom's JPEG and PNG header parser, libexif, and
// libvips' header loaders for other formats): a value or a DarkroomError, never a crash.
import CFuzzDriver
import Darkroom

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMetadata(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  if let metadata = try? AssetMetadata.read(.data(bytes, name: "fuzz")) {
    precondition(metadata.width > 0 && metadata.height > 0, "a decoded header has a size")
    precondition((1...8).contains(metadata.orientation.effective.rawValue))
  }
  return 0
}

@_cdecl("FuzzMetadata_main")
public func fuzzMetadataMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  var count = argc
  var arguments = argv
  return LLVMFuzzerRunDriver(&count, &arguments) { data, size in
    guard let data else { return 0 }
    return fuzzMetadata(data, size)
  }
}
