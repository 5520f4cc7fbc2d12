fn main() {
    println!("beamtrace");
}
