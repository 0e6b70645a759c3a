-- HTTP Basic takes a user's password beside their keys (clients of the medialoopster API log in
-- with one). Only an Argon2id hash is kept; null: the user has no password, Basic takes a key only.
ALTER TABLE `users` ADD `password_hash` text;