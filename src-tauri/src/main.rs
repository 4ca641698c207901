fn main() {
    arbor_app::placeholder();
}
