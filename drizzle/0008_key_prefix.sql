-- token list shows which key is which by its first 8 characters (32 of its 160 bits; the rest keep
-- it unguessable). Keys made before have none and are shown by their hash's first characters.
ALTER TABLE `api_keys` ADD `key_prefix` text;