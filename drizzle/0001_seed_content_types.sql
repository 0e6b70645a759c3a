-- The four fixed content types of service.md section 6.
INSERT INTO `content_types` (`id`, `name`) VALUES (1, 'projectasset'), (2, 'audioasset'), (3, 'imageasset'), (4, 'videoasset');
