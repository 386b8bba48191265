//! Source files as text. CUDA sources are UTF-8 or ASCII nearly always; the rest are mostly
//! Latin-1 comments (an author's name, a degree sign). Such a file is still checked: every
//! byte that is not part of valid UTF-8 is read as `?`, one byte for one byte, so every offset
//! and column stays the file's own.

/// A file's bytes as text.
pub struct Decoded {
    pub text: String,
    /// How many bytes were not valid UTF-8 (each became `?`).
    pub replaced: usize,
    /// The offset of the first of them.
    pub first_replaced: Option<usize>,
}

pub fn decode(bytes: Vec<u8>) -> Decoded {
    let bytes = match String::from_utf8(bytes) {
        Ok(text) => {
            return Decoded {
                text,
                replaced: 0,
                first_replaced: None,
            }
        }
        Err(e) => e.into_bytes(),
    };
    let mut text = String::with_capacity(bytes.len());
    let (mut replaced, mut first_replaced) = (0, None);
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        if !chunk.invalid().is_empty() {
            first_replaced.get_or_insert(text.len());
            replaced += chunk.invalid().len();
            text.extend(std::iter::repeat_n('?', chunk.invalid().len()));
        }
    }
    Decoded {
        text,
        replaced,
        first_replaced,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_offset_stays_the_files_own() {
        let bytes = b"// caf\xe9 \xc3\xa9 \xf0\x9f\n__global__ void k() {}\n".to_vec();
        let d = decode(bytes.clone());
        assert_eq!(d.text.len(), bytes.len());
        assert_eq!(d.text, "// caf? é ??\n__global__ void k() {}\n");
        assert_eq!((d.replaced, d.first_replaced), (3, Some(6)));
        let ok = decode(b"plain".to_vec());
        assert_eq!(
            (ok.text.as_str(), ok.replaced, ok.first_replaced),
            ("plain", 0, None)
        );
    }
}
