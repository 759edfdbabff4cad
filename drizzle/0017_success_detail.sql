CREATE TABLE "success_detail" (
	"trigger_id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"detail" text NOT NULL
);
