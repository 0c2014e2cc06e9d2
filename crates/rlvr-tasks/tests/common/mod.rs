pub mod labelled;
